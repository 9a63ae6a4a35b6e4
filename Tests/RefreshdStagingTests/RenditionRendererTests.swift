import Foundation
import Testing
@testable import RefreshdStaging

@Suite struct RenditionRendererTests {
    let ceiling = 30 * 1_048_576

    @Test func jpegRenditionHasTheExactSizeAndDecodes() throws {
        let dir = TemporaryDirectory()
        let source = try dir.image("a.jpg", width: 1600, height: 960)
        let report = try RenditionRenderer.render(source: source, to: dir.file("out.jpg"), width: 360, height: 170,
                                                  memoryCeiling: ceiling)
        #expect(report.scaleNumerator == 2)        // 1600/8*2 = 400 wide covers 360 (crop 1600x755 -> 400x189)
        #expect(report.decodedWidth == 400 && report.decodedHeight == 240)
        let decoded = try DecodedImage.decode(dir.file("out.jpg"))
        #expect(decoded.width == 360 && decoded.height == 170)
    }

    @Test func pngRenditionsIncludingUpscaleAndSquare() throws {
        let dir = TemporaryDirectory()
        let source = try dir.image("a.png", width: 500, height: 300, format: .png)
        for (w, h) in [(170, 170), (360, 170), (800, 600)] {
            try RenditionRenderer.render(source: source, to: dir.file("out.jpg"), width: w, height: h, memoryCeiling: ceiling)
            let decoded = try DecodedImage.decode(dir.file("out.jpg"))
            #expect(decoded.width == w && decoded.height == h)
        }
    }

    @Test func orientationSixComesOutRotated() throws {
        let dir = TemporaryDirectory()
        // Stored 800x400 (landscape): left half red, right half blue; orientation 6 shows it
        // rotated clockwise, portrait, with red on top.
        let path = dir.file("sideways.jpg")
        try SampleLibrary.write(path: path, width: 800, height: 400, format: .jpeg, orientation: .right) { x, _ in
            x < 400 ? (220, 20, 20) : (20, 20, 220)
        }
        let info = try RenditionRenderer.probe(path)
        #expect(info.orientation == .right && info.displayWidth == 400 && info.displayHeight == 800)
        try RenditionRenderer.render(source: path, to: dir.file("out.jpg"), width: 100, height: 200, memoryCeiling: ceiling)
        let out = try DecodedImage.decode(dir.file("out.jpg"))
        #expect(out.width == 100 && out.height == 200)
        let top = out.pixel(x: 50, y: 20), bottom = out.pixel(x: 50, y: 180)
        #expect(top.r > 150 && top.b < 80)
        #expect(bottom.b > 150 && bottom.r < 80)
    }

    @Test func averagesRatherThanSamples() throws {
        let dir = TemporaryDirectory()
        // One-pixel black and white stripes average to mid gray.
        let path = dir.file("stripes.png")
        try SampleLibrary.write(path: path, width: 400, height: 200, format: .png) { x, _ in
            x % 2 == 0 ? (0, 0, 0) : (255, 255, 255)
        }
        try RenditionRenderer.render(source: path, to: dir.file("out.jpg"), width: 100, height: 50, memoryCeiling: ceiling)
        let out = try DecodedImage.decode(dir.file("out.jpg"))
        let p = out.pixel(x: 50, y: 25)
        #expect(abs(p.r - 128) < 12 && abs(p.g - 128) < 12)
    }

    @Test func interlacedPNGIsDecodedWholeWithinTheCeilingAndRefusedOver() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("interlaced.png")
        try SampleLibrary.write(path: path, width: 300, height: 200, format: .png, interlaced: true)
        #expect(try RenditionRenderer.probe(path).isInterlaced)
        try RenditionRenderer.render(source: path, to: dir.file("out.jpg"), width: 120, height: 80, memoryCeiling: ceiling)
        let out = try DecodedImage.decode(dir.file("out.jpg"))
        #expect(out.width == 120 && out.height == 80)
        let error = #expect(throws: ImageError.self) {
            try RenditionRenderer.render(source: path, to: dir.file("out2.jpg"), width: 120, height: 80, memoryCeiling: 200_000)
        }
        #expect(error?.file == path)
        #expect(error?.reason.contains("interlaced PNG is decoded whole") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.file("out2.jpg")))
    }

    @Test func renditionOverTheCeilingIsRefusedWithFigures() throws {
        let dir = TemporaryDirectory()
        let source = try dir.image("a.jpg")
        let error = #expect(throws: ImageError.self) {
            try RenditionRenderer.render(source: source, to: dir.file("out.jpg"), width: 1080, height: 510, memoryCeiling: 1_000_000)
        }
        #expect(error?.reason.contains("over the memory ceiling of 1.0 MiB") == true)
        #expect(error?.reason.contains("1080x510 needs about 2.1 MiB") == true)
    }

    @Test func badFilesAreErrorsNamingTheFileAndWhy() throws {
        let dir = TemporaryDirectory()
        let good = try dir.image("good.jpg")
        let bytes = try #require(FileManager.default.contents(atPath: good))
        let pngBytes = try #require(FileManager.default.contents(atPath: try dir.image("good.png", format: .png)))
        try dir.write("empty.jpg", Data())
        try dir.write("truncated.jpg", bytes.prefix(bytes.count / 2))
        try dir.write("truncated.png", pngBytes.prefix(pngBytes.count / 2))
        var corrupt = bytes
        for i in stride(from: 700, to: corrupt.count - 200, by: 97) { corrupt[i] = 0xFF; corrupt[i + 1] = 0xD9 }
        try dir.write("corrupt.jpg", corrupt)
        try dir.write("text.jpg", Data("hello, not an image".utf8))
        try dir.write("header-only.jpg", bytes.prefix(4))
        let cases: [(String, String)] = [
            ("empty.jpg", "empty file (0 bytes)"),
            ("truncated.jpg", "corrupt or truncated JPEG"),
            ("truncated.png", "corrupt or truncated PNG"),
            ("corrupt.jpg", "corrupt or truncated JPEG"),
            ("text.jpg", "not a JPEG or PNG image (starts with 68 65 6c 6c)"),
            ("header-only.jpg", "not a readable JPEG"),
            ("missing.jpg", "cannot read: No such file or directory"),
        ]
        for (name, reason) in cases {
            let error = #expect(throws: ImageError.self, "\(name)") {
                try RenditionRenderer.render(source: dir.file(name), to: dir.file("out.jpg"), width: 64, height: 32,
                                             memoryCeiling: ceiling)
            }
            #expect(error?.file == dir.file(name))
            #expect(error?.reason.hasPrefix(reason) == true, "\(name): \(error?.reason ?? "no error")")
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.jpg")))
        }
    }

    /// An estimate that overflows saturates and refuses the source; it wrapped to a negative
    /// number that passed the memory ceiling.
    @Test func anEstimateThatOverflowsRefusesTheSource() {
        let info = ImageInfo(format: .jpeg, width: 60_000, height: 60_000, orientation: .up, isProgressive: true,
                             isInterlaced: false, coefficientBytes: Int.max - 10)
        #expect(RenditionRenderer.estimatedBytes(for: info, width: 1080, height: 510) == Int.max)
        #expect(RenditionRenderer.refusal(for: info, width: 1080, height: 510, memoryCeiling: 30 << 20,
                                          maxSourcePixels: Int.max) != nil)
    }
}
