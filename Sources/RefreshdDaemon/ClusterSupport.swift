import Foundation
import RefreshdConfig

/// What cluster mode (`refreshd run --store`, issue 24) runs, and the refusal of the rest at the
/// start: a job a node would otherwise load and then silently not run as the file says.
///
/// Refused, each with the job file, the line of the field and what is supported:
/// - a timeline job (`kind: timeline`, its `widget:`): widget timelines, their budgets and the
///   publications in the shared container are one machine's state, not split by shard yet;
/// - a built-in action (`action: stage-playlist`): its worker and staging state are the
///   machine's, not the shard's.
/// Live activities have no job-file field (a run starts one on its results channel): in cluster
/// mode every shard's activity machine is turned off, so a start is refused `disabled` and the
/// job's log says so (`ClusterDaemon`), and `run --no-activities` / `--max-activities` are
/// refused with `--store`.
package enum ClusterSupport {
    /// What a cluster node runs (said in every refusal).
    package static let supported = "cluster mode (--store) runs command jobs (processing, app-refresh), templates with their instances, and on-failure/on-recovery notifiers"

    /// One error per unsupported job in `configs`, at the line of the field that makes it so.
    package static func refusals(_ configs: [JobConfig]) -> [ConfigError] {
        var errors: [ConfigError] = []
        for config in configs {
            if config.widget != nil {
                let (line, column) = location(of: ["kind", "widget"], in: config)
                errors.append(ConfigError(file: config.file, line: line, column: column, message:
                    "kind: timeline: \(config.identifier) is a timeline job (widget:), not supported in cluster mode: widget timelines and their budgets are one machine's state, not split by shard; \(supported). Run it on a one-machine refreshd (without --store) or move it out of the cluster's job folder"))
            }
            if let action = config.action {
                let (line, column) = location(of: ["action"], in: config)
                errors.append(ConfigError(file: config.file, line: line, column: column, message:
                    "action: \(action.name): built-in actions are not supported in cluster mode: their worker and staging state are one machine's; \(supported). Use command: instead (e.g. [refreshd, stage, ...]) or run it on a one-machine refreshd"))
            }
        }
        return errors
    }

    /// The line and column of the first top-level key among `keys` in the job's file (the
    /// loader keeps the identifier's line only); the job's line when the file cannot be read.
    static func location(of keys: [String], in config: JobConfig) -> (Int, Int) {
        guard let text = try? String(contentsOfFile: config.file, encoding: .utf8) else { return (config.line, 1) }
        for key in keys {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.hasPrefix(key + ":") {
                return (index + 1, 1)
            }
        }
        return (config.line, 1)
    }
}
