import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// Every error is one line that says what is wrong, where it really is.
@Suite struct ErrorMessageTests {
    let header = "identifier: com.example.messages\ncommand: [true]\n"

    @Test func echoedValuesAreEscapedOntoOneLine() throws {
        let errors = TestSupport.errors(header + "namespace: \"a\\nb\\u001B[31mred\\tx\\r\\0\"\nkind: \"\\u2028\"\n")
        let text = ConfigErrors(errors).description
        #expect(text.split(separator: "\n").count == errors.count)
        #expect(!text.unicodeScalars.contains { EchoText.needsEscape($0) && $0 != "\n" })
        #expect(errors.contains { $0.message.contains(#""a\nb\u{1B}[31mred\tx\r\0""#) })
        #expect(errors.contains { $0.message.contains(#""\u{2028}""#) })
    }

    @Test func longEchoedValuesAreCut() throws {
        let error = try #require(TestSupport.onlyError(header + "kind: " + String(repeating: "z", count: 5000) + "\n"))
        #expect(error.message == "kind: expected one of app-refresh, processing, timeline, found \"" + String(repeating: "z", count: 60) + "…\"")
    }

    @Test func configErrorIsOneLineWhateverItIsGiven() {
        let error = ConfigError(file: "Jobs/a\nb.yaml", line: 1, column: 1, message: "x\ny\u{1B}")
        #expect(error.description == #"Jobs/a\nb.yaml:1:1: x\ny\u{1B}"#)
    }

    @Test func tabsInIndentationAreNamed() throws {
        let error = try #require(TestSupport.onlyError(header + "retry:\n\tlimit: 3\n"))
        #expect(error.position == "4:1")
        #expect(error.message == "invalid YAML: found a tab in the indentation; expected spaces (YAML forbids tabs for indentation)")
    }

    @Test func underIndentedKeyIsAnIndentationError() throws {
        let error = try #require(TestSupport.onlyError(header + "retry:\n    limit: 3\n  max: 5s\n"))
        #expect(error.position == "5:3")
        // Indented less than retry's keys (column 5), but more than the top level's (column 1).
        #expect(error.message.hasPrefix("invalid YAML: expected a key (name: value) at column 1, like the mapping at line 1"))
        #expect(error.message.hasSuffix("check the indentation"))
    }

    @Test func colonInsideAPlainValueIsNamed() throws {
        let error = try #require(TestSupport.onlyError(header + "namespace: a: b\n"))
        #expect(error.message.hasPrefix("invalid YAML: found \": \" inside a plain value"))
    }

    @Test func multiLineCalendarErrorIsOnTheRightLine() throws {
        // Folded into "Mon..Fri 25:00": the hour is on line 4, not past the end of line 3.
        let plain = try #require(TestSupport.onlyError(header + "earliest: Mon..Fri\n  25:00\n"))
        #expect(plain.position == "4:3")
        let folded = try #require(TestSupport.onlyError(header + "resubmit:\n  calendar: >-\n    Mon..Fri\n    25:00\n"))
        #expect(folded.position == "6:5")
    }

    @Test func invalidUTF8IsLocatedAtTheFirstBadByte() {
        TestSupport.withTemporaryDirectory { root in
            let path = TestSupport.write("", to: "Jobs/bad.yaml", in: root)
            var bytes = Array("identifier: com.example.a\ncommand: [true, \"é".utf8)
            bytes += [0xC3, 0x28]  // a lead byte without its continuation
            bytes += Array("\"]\n".utf8)
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            guard case .failure(let errors) = JobDirectory.load(root + "/Jobs", searchPath: nil) else {
                Issue.record("should fail"); return
            }
            #expect(errors.errors.map(\.position) == ["2:19"])
            #expect(errors.errors.first?.message == "expected UTF-8 text, found the byte 0xC3, which is not valid UTF-8 here")
        }
    }

    @Test func errorsPerFileAreCapped() {
        let keys = (1...100).map { "unknown\($0): x\n" }.joined()
        let errors = TestSupport.errors(header + keys)
        #expect(errors.count == 21)
        #expect(errors.last?.message == "80 more errors in this file not shown (at most 20 are shown per file)")
        #expect(errors.last?.position == "23:1")
    }

    @Test func namespaceLimitErrorsNameOnlyAFewJobs() {
        TestSupport.withTemporaryDirectory { root in
            for index in 0..<200 {
                TestSupport.write("identifier: com.example.j\(index)\ncommand: [true]\n",
                                  to: String(format: "Jobs/j%03d.yaml", index), in: root)
            }
            guard case .failure(let errors) = JobDirectory.load(root + "/Jobs", searchPath: TestSupport.searchPath) else {
                Issue.record("should fail"); return
            }
            #expect(errors.errors.count == 199)
            #expect(errors.errors.allSatisfy { $0.message.utf8.count < 800 })  // four paths named, not 199
            #expect(errors.errors.last?.message.contains("and 196 more;") == true)
        }
    }

    @Test func fileOverTheSizeLimitIsRefusedWithItsSize() {
        let big = header + "# " + String(repeating: "x", count: JobFileLimits.maximumFileSize) + "\n"
        let error = TestSupport.onlyError(big)
        #expect(error?.position == "1:1")
        #expect(error?.message == "the file is 1,048,628 bytes; expected a job file of at most 1 MiB (1,048,576 bytes)")
    }
}
