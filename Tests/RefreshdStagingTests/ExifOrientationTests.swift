import Testing
@testable import RefreshdStaging

@Suite struct ExifOrientationTests {
    private func parse(_ bytes: [UInt8]) -> ExifOrientation {
        bytes.withUnsafeBytes { ExifOrientation.parse(app1: $0) }
    }

    @Test func readsTheOrientationItWrites() {
        for orientation in [ExifOrientation.up, .upMirrored, .down, .downMirrored, .leftMirrored, .right, .rightMirrored, .left] {
            #expect(parse(orientation.app1Payload) == orientation)
        }
    }

    @Test func readsLittleEndianTIFF() {
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00,
                             0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00]
        #expect(tiff.withUnsafeBytes { ExifOrientation.parse(tiff: $0) } == .left)
    }

    @Test func hostileOffsetsAndCountsGiveUpright() {
        var payload = ExifOrientation.right.app1Payload
        payload[13] = 0xFF                           // IFD offset past the end
        #expect(parse(payload) == .up)
        payload = ExifOrientation.right.app1Payload
        payload[10] = 0x7F; payload[11] = 0xFF; payload[12] = 0xFF; payload[13] = 0xFF   // huge offset
        #expect(parse(payload) == .up)
        payload = ExifOrientation.right.app1Payload
        payload[14] = 0xFF; payload[15] = 0xFF      // 65,535 entries claimed in a 1-entry block
        #expect(parse(payload) == .right)            // the real entry comes first; the rest is never read
        payload[16] = 0x00                           // first tag no longer 0x0112: the walk runs off the end safely
        #expect(parse(payload) == .up)
        #expect(parse(Array(payload.prefix(9))) == .up)
        #expect(parse([]) == .up)
        payload = ExifOrientation.right.app1Payload
        payload[25] = 9                              // out of range value
        #expect(parse(payload) == .up)
    }

    @Test func storedPointRotatesClockwiseForSix() {
        // Stored 4 wide, 2 high; shown 2 wide, 4 high. Display top-left is stored bottom-left.
        #expect(ExifOrientation.right.storedPoint(x: 0, y: 0, storedWidth: 4, storedHeight: 2) == (0, 1))
        #expect(ExifOrientation.right.storedPoint(x: 1, y: 3, storedWidth: 4, storedHeight: 2) == (3, 0))
        #expect(ExifOrientation.left.storedPoint(x: 0, y: 0, storedWidth: 4, storedHeight: 2) == (3, 0))
    }
}
