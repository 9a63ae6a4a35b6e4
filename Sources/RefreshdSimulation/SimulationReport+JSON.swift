import Foundation
import RefreshdCore

extension SimulationReport {
    /// The report as `refreshd simulate --json` prints it: pretty-printed, keys sorted, byte for
    /// byte what `JSONEncoder` with `[.prettyPrinted, .sortedKeys]` writes, and a newline.
    package func prettyJSON() throws -> Data {
        var data = Data()
        try writePrettyJSON { data.append(contentsOf: $0) }
        return data
    }

    /// Hands `prettyJSON()`'s bytes to `write` in pieces of about `chunk` bytes, in order, never
    /// holding the whole text.
    ///
    /// A year of a per-minute job is half a million runs, 125 MB of JSON: through `JSONEncoder`
    /// (which builds a tree of every value before writing) they cost a third of the whole
    /// simulation and doubled its peak memory, and even written by hand into one buffer they
    /// added 200 MB. So the report is encoded with the runs left out, and each job's runs are
    /// written straight where its empty list stands, a piece at a time.
    package func writePrettyJSON(chunk: Int = 1 << 20, _ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        var shell = self
        for i in shell.jobs.indices { shell.jobs[i].runs = [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let encoded = try encoder.encode(shell)
        var out: [UInt8] = []
        out.reserveCapacity(min(encoded.count, chunk) + chunk / 8)
        func flush(_ out: inout [UInt8], over limit: Int) throws {
            guard out.count > limit else { return }
            try out.withUnsafeBytes(write)
            out.removeAll(keepingCapacity: true)
        }
        // Sorted keys: `figures`, `identifier`, `runs` in each job; the jobs array is the only
        // place a `"runs"` key appears, so the n-th empty list after "jobs" is job n's.
        guard var position = encoded.range(of: Data("\n  \"jobs\" : [".utf8))?.lowerBound else {
            out.append(contentsOf: encoded)
            out.append(0x0A)
            return try flush(&out, over: 0)
        }
        out.append(contentsOf: encoded[..<position])
        let empty = Data("\"runs\" : [\n\n".utf8)
        for job in jobs {
            guard let list = encoded.range(of: empty, in: position..<encoded.endIndex),
                  let close = encoded[list.upperBound...].firstIndex(of: UInt8(ascii: "]")) else { break }
            out.append(contentsOf: encoded[position..<list.lowerBound])
            // The spaces before the closing bracket are the list's indent.
            try Self.writeRuns(job.runs, indent: close - list.upperBound, into: &out) { try flush(&$0, over: chunk) }
            position = close + 1
        }
        out.append(contentsOf: encoded[position...])
        out.append(0x0A)
        try flush(&out, over: 0)
    }

    /// `"runs" : [` then each run at `indent + 2`, its fields at `indent + 4`, as JSONEncoder
    /// pretty-prints them (an empty list stays `[\n\n<indent>]`). `afterEach` gets the buffer
    /// after each run, to write it out and empty it.
    static func writeRuns(_ runs: [Run], indent: Int, into out: inout [UInt8],
                          afterEach: (inout [UInt8]) throws -> Void) rethrows {
        out.append(contentsOf: "\"runs\" : [\n".utf8)
        if runs.isEmpty {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
            out.append(UInt8(ascii: "]"))
            return
        }
        let outer = [UInt8](repeating: UInt8(ascii: " "), count: indent + 2)
        let inner = [UInt8](repeating: UInt8(ascii: " "), count: indent + 4)
        for (n, run) in runs.enumerated() {
            if n > 0 { out.append(contentsOf: ",\n".utf8) }
            out.append(contentsOf: outer)
            out.append(contentsOf: "{\n".utf8)
            var first = true
            func key(_ name: StaticString) {
                if !first { out.append(contentsOf: ",\n".utf8) }
                first = false
                out.append(contentsOf: inner)
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
                out.append(contentsOf: "\" : ".utf8)
            }
            func instant(_ name: StaticString, _ value: Instant) {
                key(name)
                out.append(UInt8(ascii: "\""))
                ISO8601.append(value, to: &out)
                out.append(UInt8(ascii: "\""))
            }
            // Keys in sorted order; nil fields left out, as the synthesized encoding does.
            // Instants and outcomes are plain ASCII with nothing to escape.
            instant("earliest", run.earliest)
            if let ended = run.ended { instant("ended", ended) }
            if let outcome = run.outcome {
                key("outcome")
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: outcome.rawValue.utf8)
                out.append(UInt8(ascii: "\""))
            }
            key("runID")
            out.append(contentsOf: String(run.runID).utf8)
            instant("started", run.started)
            out.append(0x0A)
            out.append(contentsOf: outer)
            out.append(UInt8(ascii: "}"))
            try afterEach(&out)
        }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
        out.append(UInt8(ascii: "]"))
    }
}
