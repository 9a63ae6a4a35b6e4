import Glibc
import RefreshdCore

/// How the libuv host runs a command as another user (a job's `user:` and `group:`, issue 35).
///
/// libuv switches users itself (`UV_PROCESS_SETUID`/`SETGID`), but its child calls
/// `setgroups(0, NULL)` first (libuv 1.44, `uv__process_child_init`), dropping the supplementary
/// groups a user's files are often shared through, and it offers no hook to run code between the
/// fork and the exec. So the host spawns util-linux's `setpriv` (Essential on Debian, always at
/// /usr/bin) in the command's place, as root, with the command's pipes, session, environment
/// and cgroup; it sets the groups the job file resolved (`initgroups(3)` semantics: the user's
/// supplementary groups, the primary one from `group:` or the user), then the gid, then the
/// uid, and execs the command in the same process. The pid, process group, session and the
/// reaper's names (`REFRESH_RUN_ID`, `REFRESH_INSTANCE`, in the initial environment of the
/// exec) are the command's, so expiration, the group's kill, the sweep and the reaper work
/// across the switch: refreshd stays root and signals it; the run's cgroup, its limit files and
/// the results pipe stay refreshd's (root's): the job can write fd 3 but cannot raise its own
/// limits. Measured: `setpriv` adds about 1.5 ms a launch (300 `/bin/true` through it, on a
/// loaded machine); refreshd's own binary as the trampoline took 90 ms to start (debug build).
enum RunAccount {
    /// `setpriv`'s path, looked for once.
    static let setpriv: String? = ["/usr/bin/setpriv", "/bin/setpriv"].first { access($0, X_OK) == 0 }

    /// The argv to spawn for `command` run as `runAs`, or why it cannot run.
    static func argv(_ command: [String], as runAs: RunAs, setpriv: String? = RunAccount.setpriv) -> Result<[String], Refusal> {
        guard let account = runAs.account else {
            return .failure(Refusal(text: "user: \(runAs.user) was not resolved (the job was read for simulation)"))
        }
        guard let setpriv else {
            return .failure(Refusal(text: "user: \(runAs.user) needs util-linux's setpriv (/usr/bin/setpriv), which is not installed"))
        }
        return .success([setpriv, "--reuid=\(account.uid)", "--regid=\(account.gid)",
                         "--groups=" + account.groups.map(String.init).joined(separator: ","), "--"] + command)
    }

    struct Refusal: Error { let text: String }

    /// `nobody (uid 65534, gid 65534, groups 65534)`: the run's log line.
    static func describe(_ runAs: RunAs) -> String {
        guard let account = runAs.account else { return runAs.text }
        return "\(account.name) (uid \(account.uid), gid \(account.gid), groups \(account.groups.map(String.init).joined(separator: ",")))"
    }
}
