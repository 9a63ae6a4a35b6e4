import Foundation
import Testing
@testable import RefreshdConfig

/// Files that cannot be job files say why.
@Suite struct JobFileReaderTests {
    func errors(_ setUp: (String) -> Void) -> [String] {
        TestSupport.withTemporaryDirectory { root in
            try? FileManager.default.createDirectory(atPath: root + "/Jobs", withIntermediateDirectories: true)
            setUp(root + "/Jobs")
            guard case .failure(let errors) = JobDirectory.load(root + "/Jobs", searchPath: nil) else {
                Issue.record("should fail"); return []
            }
            return errors.errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position): \($0.message)" }
        }
    }

    @Test func directoryNamedLikeAJobFile() {
        #expect(errors { jobs in
            try? FileManager.default.createDirectory(atPath: jobs + "/x.yaml", withIntermediateDirectories: true)
        } == ["x.yaml:1:1: expected a job file, but this is a directory (job folders are not read recursively)"])
    }

    @Test func brokenSymbolicLink() {
        #expect(errors { jobs in
            try? FileManager.default.createSymbolicLink(atPath: jobs + "/x.yaml", withDestinationPath: "gone.yaml")
        } == ["x.yaml:1:1: expected a readable job file, but it is a broken symbolic link (to \"gone.yaml\", which does not exist)"])
    }

    @Test func namedPipeIsNotOpenedForReading() {
        #expect(errors { jobs in _ = mkfifo(jobs + "/x.yaml", 0o644) }
            == ["x.yaml:1:1: expected a regular job file, but this is a named pipe (FIFO)"])
    }

    @Test func hugeFileIsRefusedWithoutBeingRead() {
        let clock = ContinuousClock()
        var found: [String] = []
        let elapsed = clock.measure {
            found = errors { jobs in
                _ = FileManager.default.createFile(atPath: jobs + "/x.yaml", contents: nil)
                let handle = FileHandle(forWritingAtPath: jobs + "/x.yaml")
                try? handle?.truncate(atOffset: 50 << 20)  // sparse: 50 MiB of nothing
                try? handle?.close()
            }
        }
        #expect(found == ["x.yaml:1:1: the file is 52,428,800 bytes; expected a job file of at most 1 MiB (1,048,576 bytes)"])
        #expect(elapsed < .milliseconds(500))
    }

    @Test func nonUTF8FileNameIsShownEscaped() {
        #expect(errors { jobs in
            var path = Array(jobs.utf8) + Array("/caf".utf8) + [0xE9] + Array(".yaml".utf8)
            path.append(0)
            let descriptor = path.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644) }
            close(descriptor)
        } == [#"caf\xE9.yaml:1:1: expected a UTF-8 file name, found bytes that are not UTF-8 (shown as \xFF); rename the file"#])
    }

    @Test func utf8ValidationFindsTheFirstBadByte() {
        func first(_ bytes: [UInt8]) -> Int? { bytes.withUnsafeBytes { SourceText.firstInvalidUTF8(in: $0) } }
        #expect(first(Array("héllo ✓ 𝄞".utf8)) == nil)
        #expect(first([0x61, 0xFF]) == 1)
        #expect(first([0x61, 0xC0, 0x80]) == 1)          // overlong
        #expect(first([0x61, 0xED, 0xA0, 0x80]) == 1)    // surrogate
        #expect(first([0x61, 0x62, 0xE2, 0x82]) == 2)    // truncated at the end
        #expect(first([0xF4, 0x90, 0x80, 0x80]) == 0)    // past U+10FFFF
    }
}
