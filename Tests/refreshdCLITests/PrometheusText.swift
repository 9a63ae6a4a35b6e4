import Foundation
import Testing

/// Checks a metrics file with a Prometheus text-format parser: `prometheus_client`'s, installed
/// from PyPI into the test's own directory (`pip install --target`, nothing system-wide), or, when
/// it cannot be installed (no network, no pip), a strict parser of the format written here.
enum PrometheusText {
    static func check(_ text: String, in directory: String) throws {
        let lib = directory + "/pylib"
        let file = directory + "/metrics-to-parse.prom"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let installed = system("python3 -m pip install -q --disable-pip-version-check --target '\(lib)' prometheus_client >/dev/null 2>&1") == 0
        if installed {
            let script = """
                import sys
                from prometheus_client.parser import text_string_to_metric_families
                names = [f.name for f in text_string_to_metric_families(open(sys.argv[1]).read())]
                for required in ["refreshd_pending_requests", "refreshd_runs", "refreshd_launch_lateness_seconds", "refreshd_missed_slots"]:
                    assert required in names, (required, names)
                print("prometheus_client parsed", len(names), "families")
                """
            try script.write(toFile: directory + "/parse.py", atomically: true, encoding: .utf8)
            let status = system("PYTHONPATH='\(lib)' python3 '\(directory)/parse.py' '\(file)'")
            #expect(status == 0, "prometheus_client refused the metrics:\n\(text)")
        } else {
            print("prometheus_client not installable here: checking with the strict parser")
            strict(text)
        }
    }

    /// Every line a comment (`# HELP`/`# TYPE`) or `name{label="value",...} number`.
    static func strict(_ text: String) {
        let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
        let label = #"[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\])*""#
        let number = #"(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|Inf|NaN))"#
        let sample = try! Regex("^\(name)(?:\\{\(label)(?:,\(label))*\\})? \(number)$")
        let comment = try! Regex("^# (?:HELP|TYPE) \(name)( .*)?$")
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            #expect(line.wholeMatch(of: sample) != nil || line.wholeMatch(of: comment) != nil, "not Prometheus text: \(line)")
        }
        #expect(text.contains("# TYPE refreshd_runs_total counter"))
        #expect(text.contains("# TYPE refreshd_launch_lateness_seconds histogram"))
    }
}
