import Glibc

// refreshd-bench MODE [--count N] [--spread-ms MS] [--margin-ms MS] [--cap N] [--state DIR]
//                     [--seconds S] [--program PATH] [--days N]
// Prints one JSON object per run on stdout; Scripts/bench collects them.

let usage = """
    usage: refreshd-bench dispatch|memory|idle|commands|layers|instances|instance-search|shared-database|shared-launches [--count N] [--spread-ms MS] [--margin-ms MS]
                          [--cap N] [--state DIR] [--seconds S] [--program PATH] [--label NAME] [--days N]
                          commands: [--tracking cgroup|sweep|embedded]
                          instances: [--state DIR [--fill yes]] [--due N]
                          instance-search: --state DIR (filled by instances --fill yes) [--count N] [--runs N]
                          shared-database: --database CONNINFO --state DIR [--shards N]
                          shared-launches: --database CONNINFO [--shards N] [--count N] [--spread-ms MS]
    """

var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else {
    warn(usage)
    exit(2)
}
var options: [String: String] = [:]
var i = 1
while i + 1 < arguments.count, arguments[i].hasPrefix("--") {
    options[String(arguments[i].dropFirst(2))] = arguments[i + 1]
    i += 2
}
@MainActor func int(_ key: String, _ fallback: Int) -> Int { options[key].flatMap { Int($0) } ?? fallback }

do {
    switch mode {
    case "dispatch":
        try dispatch(count: int("count", 100_000), spreadMs: Int64(int("spread-ms", 10_000)),
                     marginMs: Int64(int("margin-ms", 1_000)), cap: int("cap", 4), state: options["state"],
                     label: options["label"])
    case "memory":
        try memory(count: int("count", 1_000_000))
    case "idle":
        try idle(count: int("count", 100_000), seconds: int("seconds", 30))
    case "layers":
        try layers(days: int("days", 365), bench: options["label"] ?? "layers")
    case "instances":
        if let due = options["due"].flatMap({ Int($0) }) {
            try instancesDispatch(count: int("count", 1_000_000), due: due, spreadMs: Int64(int("spread-ms", 10_000)),
                                  marginMs: Int64(int("margin-ms", 4_000)))
        } else {
            try instances(count: int("count", 1_000_000), state: options["state"], fill: options["fill"] == "yes")
        }
    case "instance-search":
        guard let state = options["state"] else {
            warn("refreshd-bench instance-search needs --state DIR (filled by instances --fill yes)")
            exit(2)
        }
        try instanceSearch(count: int("count", 1_000_000), state: state, runs: int("runs", 1_000_000))
    case "shared-database":
        guard let conninfo = options["database"], let state = options["state"] else {
            warn("refreshd-bench shared-database needs --database CONNINFO --state DIR")
            exit(2)
        }
        try sharedDatabase(count: int("count", 2_000), conninfo: conninfo, state: state, shards: int("shards", 1))
    case "shared-launches":
        guard let conninfo = options["database"] else {
            warn("refreshd-bench shared-launches needs --database CONNINFO")
            exit(2)
        }
        try sharedLaunches(count: int("count", 5_000), spreadMs: Int64(int("spread-ms", 5_000)),
                           marginMs: Int64(int("margin-ms", 8_000)), cap: int("cap", 64), conninfo: conninfo,
                           shards: int("shards", 16))
    case "commands":
        let tracking = options["tracking"] ?? "cgroup"
        guard ["cgroup", "sweep", "embedded"].contains(tracking) else {
            warn("refreshd-bench commands: --tracking expects cgroup, sweep or embedded, found \(tracking)")
            exit(2)
        }
        try commands(count: int("count", 1_000), cap: int("cap", 4), program: options["program"] ?? "/bin/true", tracking: tracking)
    default:
        warn(usage)
        exit(2)
    }
} catch {
    warn("refreshd-bench \(mode): \(error)")
    exit(1)
}
