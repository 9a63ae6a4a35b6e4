/// The picture of a cluster run (`simulate --nodes N --svg FILE`): a lane per shard, coloured by
/// the node that led it over time, the faults as vertical lines. Plain SVG text.
package enum ClusterPicture {
    static let colours = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]

    package static func svg(_ report: ClusterSimulation.Report) -> String {
        let left = 70.0, width = 900.0, lane = 16.0, top = 30.0
        let total = max(1.0, seconds(report.duration))
        let height = top + lane * Double(report.shards) + 40
        func x(_ d: Duration) -> String { format(left + width * seconds(d) / total) }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(format(left + width + 20))\" height=\"\(format(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        out += "<text x=\"\(format(left))\" y=\"18\">\(report.nodes) nodes, \(report.shards) shards: who leads each shard</text>\n"
        for shard in 0..<report.shards {
            let y = top + lane * Double(shard)
            out += "<text x=\"4\" y=\"\(format(y + 12))\">shard \(shard)</text>\n"
            out += "<rect x=\"\(format(left))\" y=\"\(format(y + 1))\" width=\"\(format(width))\" height=\"\(format(lane - 2))\" fill=\"#eeeeee\"/>\n"
        }
        for span in report.ownership where span.to > span.from {
            let y = top + lane * Double(span.shard)
            let w = format(max(0.5, width * seconds(span.to - span.from) / total))
            out += "<rect x=\"\(x(span.from))\" y=\"\(format(y + 1))\" width=\"\(w)\" height=\"\(format(lane - 2))\" fill=\"\(colours[span.node % colours.count])\"><title>node\(span.node)</title></rect>\n"
        }
        for mark in report.marks {
            out += "<line x1=\"\(x(mark.at))\" y1=\"\(format(top))\" x2=\"\(x(mark.at))\" y2=\"\(format(top + lane * Double(report.shards)))\" stroke=\"#000\" stroke-dasharray=\"3,2\"><title>\(mark.what)</title></line>\n"
        }
        let legendY = top + lane * Double(report.shards) + 24
        for node in 0..<report.nodes {
            let lx = left + 90 * Double(node)
            out += "<rect x=\"\(format(lx))\" y=\"\(format(legendY - 10))\" width=\"12\" height=\"12\" fill=\"\(colours[node % colours.count])\"/>"
            out += "<text x=\"\(format(lx + 16))\" y=\"\(format(legendY))\">node\(node)</text>\n"
        }
        return out + "</svg>\n"
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func format(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))" : "\(Int(tenths) / 10).\(abs(Int(tenths)) % 10)"
    }
}
