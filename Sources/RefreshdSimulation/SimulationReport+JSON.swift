import Foundation
import RefreshdCore

extension SimulationReport {
    /// The report as `refreshd simulate --json` prints it: pretty-printed, keys sorted, byte for
    /// byte what `JSONEncoder` with `[.prettyPrinted, .sortedKeys]` writes, and a newline.
    ///
    /// A year of a per-minute job is half a million runs; through `JSONEncoder` (which builds a
    /// tree of every value before writing) they cost a third of the whole simulation and
    /// doubled its peak memory. So the report is encoded with the runs left out, and each job's
    /// runs are written straight into the bytes where its empty list stands.
    public func prettyJSON() throws -> Data {
        var shell = self
        for i in shell.jobs.indices { shell.jobs[i].runs = [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let encoded = try encoder.encode(shell)
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count + jobs.reduce(0) { $0 + $1.runs.count * 200 } + 1)
        // Sorted keys: `figures`, `identifier`, `runs` in each job; the jobs array is the only
        // place a `"runs"` key appears, so the n-th empty list after "jobs" is job n's.
        guard var position = encoded.range(of: Data("\n  \"jobs\" : [".utf8))?.lowerBound else {
            return encoded + Data([0x0A])
        }
        out.append(contentsOf: encoded[..<position])
        let empty = Data("\"runs\" : [\n\n".utf8)
        for job in jobs {
            guard let list = encoded.range(of: empty, in: position..<encoded.endIndex),
                  let close = encoded[list.upperBound...].firstIndex(of: UInt8(ascii: "]")) else { break }
            out.append(contentsOf: encoded[position..<list.lowerBound])
            // The spaces before the closing bracket are the list's indent.
            Self.writeRuns(job.runs, indent: close - list.upperBound, into: &out)
            position = close + 1
        }
        out.append(contentsOf: encoded[position...])
        out.append(0x0A)
        return Data(out)
    }

    /// `"runs" : [` then each run at `indent + 2`, its fields at `indent + 4`, as JSONEncoder
    /// pretty-prints them (an empty list stays `[\n\n<indent>]`).
    static func writeRuns(_ runs: [Run], indent: Int, into out: inout [UInt8]) {
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
            func field(_ key: String, _ value: String, quoted: Bool) {
                if !first { out.append(contentsOf: ",\n".utf8) }
                first = false
                out.append(contentsOf: inner)
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: key.utf8)
                out.append(contentsOf: "\" : ".utf8)
                if quoted { out.append(UInt8(ascii: "\"")) }
                out.append(contentsOf: value.utf8)
                if quoted { out.append(UInt8(ascii: "\"")) }
            }
            // Keys in sorted order; nil fields left out, as the synthesized encoding does.
            // Instants and outcomes are plain ASCII with nothing to escape.
            field("earliest", run.earliest.iso8601, quoted: true)
            if let ended = run.ended { field("ended", ended.iso8601, quoted: true) }
            if let outcome = run.outcome { field("outcome", outcome.rawValue, quoted: true) }
            field("runID", String(run.runID), quoted: false)
            field("started", run.started.iso8601, quoted: true)
            out.append(0x0A)
            out.append(contentsOf: outer)
            out.append(UInt8(ascii: "}"))
        }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
        out.append(UInt8(ascii: "]"))
    }
}
