import RefreshdCore

/// The job names and instants that a scenario's device, faults and expectations mention, kept
/// with where they are written and checked once the whole file is read: every job named must be
/// one of the scenario's jobs, every instant must fall inside the simulated days.
struct ScenarioReferences {
    private(set) var jobs: [(name: String, key: String, location: Location)] = []
    private(set) var times: [(time: SimulationTime, text: String, key: String, location: Location)] = []

    /// A job identifier, remembered to be checked against the scenario's jobs.
    mutating func job(_ reader: ValueReader, _ sink: inout ErrorSink) -> String? {
        guard let name = reader.string(&sink, expected: "a job identifier like com.example.refresh") else { return nil }
        jobs.append((name, reader.key, reader.node.location))
        return name
    }

    /// An instant of the simulation, remembered to be checked against its window.
    mutating func time(_ reader: ValueReader, _ sink: inout ErrorSink) -> SimulationTime? {
        guard let time = reader.simulationTime(&sink) else { return nil }
        times.append((time, reader.node.scalarText ?? "", reader.key, reader.node.location))
        return time
    }

    /// Errors for names that are not among `identifiers` (nil: the jobs could not be read, so
    /// nothing is checked) and instants outside [start, start + days).
    ///
    /// A fault may name one instance of a template, `TEMPLATE[KEY]` (issue 23: one user's run
    /// crashes): `templates` gives each template's keys from its `instances:` list, or nil when
    /// its keys are drawn at simulation (`simulate: {instances: N}`), which takes any key.
    func check(identifiers: [String]?, templates: [String: [String]?] = [:], start: Instant?, days: Int?, _ sink: inout ErrorSink) {
        if let identifiers {
            let known = Set(identifiers)
            func isInstance(_ name: String) -> Bool {
                guard let split = InstanceName.split(name), let keys = templates[split.template] else { return false }
                return keys.map { $0.contains(split.key) } ?? true
            }
            for reference in jobs where !known.contains(reference.name) && !isInstance(reference.name) {
                sink.add(at: reference.location, "\(reference.key): no job \(EchoText.quoted(reference.name)) in this scenario; "
                    + Self.expectation(for: reference.name, among: identifiers))
            }
        }
        guard let start, let days else { return }
        let end = start + .seconds(Int64(days) * 86_400)
        for reference in times {
            let instant = reference.time.instant(start: start)
            if instant < start {
                sink.add(at: reference.location, "\(reference.key): \(EchoText.quoted(reference.text)) is before the simulation "
                    + "starts (\(ISO8601.format(start))); expected an instant within the \(days) simulated day\(days == 1 ? "" : "s")")
            } else if instant >= end {
                sink.add(at: reference.location, "\(reference.key): \(EchoText.quoted(reference.text)) is at or after the end of the "
                    + "simulation (\(ISO8601.format(end)), \(days) day\(days == 1 ? "" : "s") after the start); "
                    + "expected an instant within the simulated days")
            }
        }
    }

    /// Jobs listed in a "no job" error before "and N more".
    static let listedJobs = 5

    /// `did you mean "a.b"?`, or `expected one of a.b, c.d`.
    static func expectation(for name: String, among identifiers: [String]) -> String {
        if let suggestion = MappingReader.closest(to: name, in: identifiers) {
            return "did you mean \(EchoText.quoted(suggestion))?"
        }
        if identifiers.isEmpty { return "expected one of the scenario's jobs, but it has none" }
        var listed = identifiers.prefix(listedJobs).joined(separator: ", ")
        if identifiers.count > listedJobs { listed += " and \(identifiers.count - listedJobs) more" }
        return "expected one of \(listed)"
    }
}
