/// Who a job's command runs as (a job file's `user:` and `group:`, issue 35): carried as data
/// with the command, applied by the libuv host before the exec.
///
/// ```yaml
/// user: backup
/// group: staff      # optional: the primary group instead of the user's own
/// ```
///
/// The names are resolved when the job file is read (`refreshd run`, `refreshd check`), which
/// also refuses them unless refreshd runs as root; the simulator reads them unresolved
/// (`account` nil) and runs nothing as anyone. A run gets the uid, the primary group (`group:`
/// or the user's own) and the user's supplementary groups as `initgroups(3)` gives them, and
/// the variables systemd sets for `User=` (`environment`).
package struct RunAs: Sendable, Hashable {
    /// `user:` as written: a user name or a numeric uid.
    package var user: String
    /// `group:` as written, if any.
    package var group: String?
    /// The ids and home the names resolve to; nil when the job was read for simulation.
    package var account: Account?

    /// A resolved user: what the host switches to before the exec.
    package struct Account: Sendable, Hashable {
        /// The user's name in the user database (the name `user:` gave, or the uid's).
        package var name: String
        package var uid: UInt32
        /// The primary group: `group:`'s, else the user's.
        package var gid: UInt32
        /// Every group of the run, the primary one first (`initgroups(name, gid)`).
        package var groups: [UInt32]
        package var home: String
        package var shell: String

        package init(name: String, uid: UInt32, gid: UInt32, groups: [UInt32], home: String, shell: String) {
            self.name = name
            self.uid = uid
            self.gid = gid
            self.groups = groups
            self.home = home
            self.shell = shell
        }
    }

    package init(user: String, group: String? = nil, account: Account? = nil) {
        self.user = user
        self.group = group
        self.account = account
    }

    /// `HOME`, `USER`, `LOGNAME` and `SHELL` of the account, as systemd sets them for `User=`;
    /// the job's own `environment:` overrides them (as `Environment=` does). Empty unresolved.
    package var environment: [String: String] {
        guard let account else { return [:] }
        return ["HOME": account.home, "USER": account.name, "LOGNAME": account.name, "SHELL": account.shell]
    }

    /// `nobody`, or `nobody:nogroup` with `group:`: how logs and `check` show it.
    package var text: String { group.map { "\(user):\($0)" } ?? user }
}
