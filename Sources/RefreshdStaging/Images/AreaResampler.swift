/// Resizes a stream of RGB rows to an exact size by area averaging, one source row at a time.
///
/// Each output pixel is the average of the source area it covers (fractional edges weighted), a
/// good filter for reduction, which is what renditions do after DCT scaling has already brought
/// the source within 2x of the target; when the source is smaller than the target it degrades to
/// nearest-pixel enlargement. Memory is a few rows of the output's width, whatever the source's
/// height: rows outside the crop are skipped as they arrive.
final class AreaResampler {
    let outWidth: Int
    let outHeight: Int
    private let cropY: Double
    private let cropHeight: Double
    private let rowSpan: Double
    private var spanStart: [Int] = []
    private var spanCount: [Int] = []
    private var spanWeights: [Float] = []
    private var horizontal: [Float]
    private var accumulator: [Float]
    private var accumulated: Double = 0
    private var output: [UInt8]
    private var sourceRow = 0
    private(set) var emitted = 0

    /// `crop` is the source rectangle (in source pixels, fractional) that fills the output.
    init(sourceWidth: Int, crop: (x: Double, y: Double, width: Double, height: Double), outWidth: Int, outHeight: Int) {
        self.outWidth = outWidth
        self.outHeight = outHeight
        cropY = crop.y
        cropHeight = crop.height
        rowSpan = crop.height / Double(outHeight)
        horizontal = [Float](repeating: 0, count: outWidth * 3)
        accumulator = horizontal
        output = [UInt8](repeating: 0, count: outWidth * 3)
        let columnSpan = crop.width / Double(outWidth)
        for x in 0..<outWidth {
            let x0 = crop.x + Double(x) * columnSpan
            let x1 = x == outWidth - 1 ? crop.x + crop.width : x0 + columnSpan
            let first = max(0, min(sourceWidth - 1, Int(x0.rounded(.down))))
            let last = max(first + 1, min(sourceWidth, Int(x1.rounded(.up))))
            spanStart.append(first)
            spanCount.append(last - first)
            var weights: [Float] = []
            for source in first..<last {
                weights.append(Float(max(0, min(x1, Double(source + 1)) - max(x0, Double(source)))))
            }
            let total = weights.reduce(0, +)
            spanWeights += weights.map { total > 0 ? $0 / total : 1 / Float(weights.count) }
        }
    }

    private func top(of row: Int) -> Double { cropY + Double(row) * rowSpan }
    private func bottom(of row: Int) -> Double { row == outHeight - 1 ? cropY + cropHeight : top(of: row + 1) }

    /// Takes the next source row (`sourceWidth * 3` RGB bytes) and emits every output row it
    /// completes.
    func push(_ row: UnsafePointer<UInt8>, emit: (UnsafePointer<UInt8>) throws(ImageError) -> Void) throws(ImageError) {
        let rowTop = Double(sourceRow), rowBottom = Double(sourceRow + 1)
        sourceRow += 1
        guard emitted < outHeight, rowBottom > top(of: emitted) else { return }
        reduceHorizontally(row)
        while emitted < outHeight {
            let overlap = min(bottom(of: emitted), rowBottom) - max(top(of: emitted), rowTop)
            if overlap > 0 {
                let weight = Float(overlap)
                horizontal.withUnsafeBufferPointer { h in
                    accumulator.withUnsafeMutableBufferPointer { a in
                        for i in 0..<a.count { a[i] += h[i] * weight }
                    }
                }
                accumulated += overlap
            }
            guard bottom(of: emitted) <= rowBottom + 1e-9 else { break }
            try emitRow(emit)
        }
    }

    /// Emits the rows still owed when the source ran out (rounding at the last edge).
    func finish(emit: (UnsafePointer<UInt8>) throws(ImageError) -> Void) throws(ImageError) {
        while emitted < outHeight { try emitRow(emit) }
    }

    private func emitRow(_ emit: (UnsafePointer<UInt8>) throws(ImageError) -> Void) throws(ImageError) {
        if accumulated > 0 {
            let scale = Float(1 / accumulated)
            accumulator.withUnsafeBufferPointer { a in
                output.withUnsafeMutableBufferPointer { o in
                    for i in 0..<o.count { o[i] = UInt8(min(max(a[i] * scale + 0.5, 0), 255)) }
                }
            }
        }
        for i in 0..<accumulator.count { accumulator[i] = 0 }
        accumulated = 0
        emitted += 1
        try output.withUnsafeBufferPointer { (o) throws(ImageError) in try emit(o.baseAddress!) }
    }

    private func reduceHorizontally(_ row: UnsafePointer<UInt8>) {
        spanWeights.withUnsafeBufferPointer { weights in
            horizontal.withUnsafeMutableBufferPointer { h in
                var w = 0
                for x in 0..<outWidth {
                    var r: Float = 0, g: Float = 0, b: Float = 0
                    var p = spanStart[x] * 3
                    for _ in 0..<spanCount[x] {
                        let weight = weights[w]
                        r += Float(row[p]) * weight
                        g += Float(row[p + 1]) * weight
                        b += Float(row[p + 2]) * weight
                        p += 3
                        w += 1
                    }
                    h[x * 3] = r
                    h[x * 3 + 1] = g
                    h[x * 3 + 2] = b
                }
            }
        }
    }
}
