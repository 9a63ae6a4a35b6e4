import Glibc
import RefreshdCore

/// What reading `user:` and `group:` needs to know of the machine (issue 35): the uid refreshd
/// runs as and the user database. `system` asks the process and NSS; tests give their own.
///
/// Passed to `JobDirectory.load` by the commands that run or check jobs; the simulator passes
/// nil and reads the names unresolved (it runs nothing as anyone).
package struct Accounts: Sendable {
    /// A user as the database gives it: its name, ids, home and shell.
    package struct User: Sendable, Hashable {
        package var name: String
        package var uid: UInt32
        package var gid: UInt32
        package var home: String
        package var shell: String

        package init(name: String, uid: UInt32, gid: UInt32, home: String, shell: String) {
            self.name = name
            self.uid = uid
            self.gid = gid
            self.home = home
            self.shell = shell
        }
    }

    /// The uid refreshd runs as: `user:` is refused unless it is 0.
    package var runningAs: UInt32
    /// The user a name or numeric uid names, nil for none.
    package var user: @Sendable (String) -> User?
    /// The gid a group name or numeric gid names, nil for none.
    package var group: @Sendable (String) -> UInt32?
    /// The groups `initgroups(name, gid)` gives: `gid` and every group listing the user as a member.
    package var groups: @Sendable (_ name: String, _ gid: UInt32) -> [UInt32]

    package init(runningAs: UInt32, user: @escaping @Sendable (String) -> User?,
                 group: @escaping @Sendable (String) -> UInt32?,
                 groups: @escaping @Sendable (String, UInt32) -> [UInt32]) {
        self.runningAs = runningAs
        self.user = user
        self.group = group
        self.groups = groups
    }

    /// This process's effective uid and the machine's user database (`getpwnam_r`, `getgrnam_r`,
    /// `getgrouplist`: files, or whatever NSS is configured with).
    package static var system: Accounts {
        Accounts(runningAs: geteuid(), user: systemUser, group: systemGroup, groups: systemGroups)
    }

    /// Resolves `user:` (and `group:`) into the account a run switches to, or says what is wrong.
    package func account(user name: String, group groupName: String?) -> Result<RunAs.Account, AccountProblem> {
        guard let user = user(name) else { return .failure(.unknownUser) }
        var gid = user.gid
        if let groupName {
            guard let named = group(groupName) else { return .failure(.unknownGroup) }
            gid = named
        }
        // The primary group first, each group once (getgrouplist puts `gid` first already).
        var all = [gid]
        for other in groups(user.name, gid) where !all.contains(other) { all.append(other) }
        return .success(RunAs.Account(name: user.name, uid: user.uid, gid: gid, groups: all, home: user.home, shell: user.shell))
    }

    package enum AccountProblem: Error { case unknownUser, unknownGroup }

    private static let systemUser: @Sendable (String) -> User? = { text in
        var entry = Glibc.passwd()
        var result: UnsafeMutablePointer<Glibc.passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        if getpwnam_r(text, &entry, &buffer, buffer.count, &result) != 0 || result == nil {
            guard let uid = numericID(text), getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else {
                return nil
            }
        }
        return User(name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid,
                    home: String(cString: entry.pw_dir), shell: String(cString: entry.pw_shell))
    }

    private static let systemGroup: @Sendable (String) -> UInt32? = { text in
        var entry = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 65_536)
        if getgrnam_r(text, &entry, &buffer, buffer.count, &result) == 0, result != nil { return entry.gr_gid }
        guard let gid = numericID(text), getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, result != nil else {
            return nil
        }
        return gid
    }

    private static let systemGroups: @Sendable (String, UInt32) -> [UInt32] = { name, gid in
        var count: Int32 = 64
        while true {
            var list = [gid_t](repeating: 0, count: Int(count))
            var asked = count
            if getgrouplist(name, gid, &list, &asked) >= 0 { return Array(list.prefix(Int(asked))) }
            guard asked > count else { return [gid] }
            count = asked
        }
    }

    /// A uid or gid written as digits (`65534`), nil for anything else.
    private static func numericID(_ text: String) -> UInt32? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt32(text)
    }
}
