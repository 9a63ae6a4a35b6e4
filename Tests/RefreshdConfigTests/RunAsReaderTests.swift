import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// A job file's `user:` and `group:` (issue 35): resolved into the command's `RunAs` (uid, the
/// primary group, the supplementary groups, the variables systemd sets for `User=`), refused at
/// file:line:column when refreshd is not root or a name is unknown; read unresolved for the
/// simulator. The machine is injected (`Accounts`), so the rules are tested as any uid.
@Suite struct RunAsReaderTests {
    static let header = "identifier: com.example.asuser\ncommand: [true]\n"

    /// A small user database: `backup` (uid 34, group 34) is a member of `staff` (50) and
    /// `disk` (6); `nogroup` is 65534.
    static func accounts(runningAs uid: UInt32 = 0) -> Accounts {
        Accounts(runningAs: uid,
                 user: { name in
                     switch name {
                     case "backup", "34": Accounts.User(name: "backup", uid: 34, gid: 34, home: "/var/backups", shell: "/usr/sbin/nologin")
                     case "nobody": Accounts.User(name: "nobody", uid: 65534, gid: 65534, home: "/nonexistent", shell: "/usr/sbin/nologin")
                     default: nil
                     }
                 },
                 group: { ["nogroup": 65534, "staff": 50, "disk": 6][$0] },
                 groups: { name, gid in name == "backup" ? [gid, 50, 6] : [gid] })
    }

    static func parse(_ yaml: String, accounts: Accounts? = accounts()) -> Result<JobConfig, ConfigErrors> {
        JobDirectory.parse(yaml: yaml, file: "Jobs/test.yaml", projectRoot: "/", searchPath: TestSupport.searchPath,
                           now: TestSupport.now, timeZone: TestSupport.machineZone, accounts: accounts)
    }

    static func errors(_ yaml: String, accounts: Accounts? = accounts()) -> [String] {
        guard case let .failure(errors) = parse(yaml, accounts: accounts) else { return ["parsed"] }
        return errors.errors.map { "\($0.line):\($0.column): \($0.message)" }
    }

    @Test func theUserAndItsGroupsAreResolvedAndCarriedWithTheCommand() throws {
        let config = try Self.parse(Self.header + "user: backup\n").get()
        let account = RunAs.Account(name: "backup", uid: 34, gid: 34, groups: [34, 50, 6], home: "/var/backups", shell: "/usr/sbin/nologin")
        #expect(config.runAs == RunAs(user: "backup", account: account))
        #expect(config.spec.command.runAs == config.runAs)
        // `group:` replaces the primary group; the supplementary ones stay.
        let grouped = try Self.parse(Self.header + "user: backup\ngroup: nogroup\n").get()
        #expect(grouped.runAs?.account?.gid == 65534)
        #expect(grouped.runAs?.account?.groups == [65534, 50, 6])
        // A uid names its user.
        #expect(try Self.parse(Self.header + "user: \"34\"\n").get().runAs?.account == account)
        #expect(try Self.parse(Self.header).get().spec.command.runAs == nil)
    }

    /// The run's environment: HOME, USER, LOGNAME and SHELL as systemd sets them for `User=`,
    /// under the job's own `environment:`.
    @Test func theRunSeesTheUsersHomeAndName() throws {
        let config = try Self.parse(Self.header + "user: backup\nenvironment: {SHELL: /bin/sh}\n").get()
        let order = LaunchOrder(runID: 7, identifier: config.identifier, kind: .appRefresh,
                                started: TestSupport.now, deadline: TestSupport.now, attempt: 1)
        let env = config.spec.command.environment(for: order, base: ["HOME": "/root", "USER": "root", "PATH": "/usr/bin"],
                                                  instance: "i", sharedContainer: nil)
        #expect(env.contains("HOME=/var/backups"))
        #expect(env.contains("USER=backup"))
        #expect(env.contains("LOGNAME=backup"))
        #expect(env.contains("SHELL=/bin/sh"))
        #expect(env.contains("PATH=/usr/bin"))
    }

    @Test func refusedUnlessRefreshdRunsAsRoot() {
        #expect(Self.errors(Self.header + "user: backup\n", accounts: Self.accounts(runningAs: 1000)) == [
            "3:7: user: \"backup\" needs refreshd to run as root to switch users, and it runs as uid 1000; "
                + "expected refreshd run as root, or no user:",
        ])
    }

    @Test func unknownNamesAreLocated() {
        #expect(Self.errors(Self.header + "user: bakcup\n") == [
            "3:7: user: no user \"bakcup\" on this machine; expected a name or uid of its user database (getent passwd)",
        ])
        #expect(Self.errors(Self.header + "user: backup\ngroup:   stafff\n") == [
            "4:10: group: no group \"stafff\" on this machine; expected a name or gid of its group database (getent group)",
        ])
        #expect(Self.errors(Self.header + "user: [backup]\n") == [
            "3:7: user: expected a user name or uid, like nobody, found a list",
        ])
    }

    @Test func groupNeedsUserAndNeitherTakesAPlaceholderOrAnAction() throws {
        #expect(Self.errors(Self.header + "group: staff\n") == [
            "3:8: group: replaces the primary group of user:; expected user: beside it, or no group:",
        ])
        let template = "identifier: com.example.per-user\ncommand: [true, \"{user}\"]\ntemplate: true\nparameters: [user]\n"
        #expect(Self.errors(template + "user: \"{user}\"\n") == [
            "5:7: user: cannot hold a placeholder: every instance runs as its template's user; expected a user name, like nobody",
        ])
        // An instance runs as its template's user.
        #expect(try Self.parse(template + "user: backup\n").get().spec.command.filled(["user": "x"]).runAs?.account?.uid == 34)
        let action = """
            identifier: com.example.stage
            action: stage-playlist
            stage-playlist: {library: /srv/walls, switch-times: ["07:30"], families: [systemLarge], widget: w}
            user: backup
            """
        #expect(Self.errors(action) == [
            "4:7: user: applies to the job's command, and this job runs action: stage-playlist in refreshd; expected command:, or no user:",
        ])
    }

    /// Read for simulation (no `Accounts`): the names are kept as written, unresolved, whatever
    /// the uid and the user database; they change nothing there.
    @Test func theSimulatorReadsTheNamesUnresolved() throws {
        let config = try Self.parse(Self.header + "user: somebody-elsewhere\ngroup: staff\n", accounts: nil).get()
        #expect(config.runAs == RunAs(user: "somebody-elsewhere", group: "staff"))
        #expect(config.spec.command.environment(for: LaunchOrder(runID: 1, identifier: "x", kind: .appRefresh,
                                                                  started: TestSupport.now, deadline: TestSupport.now, attempt: 1),
                                                base: [:], instance: "i", sharedContainer: nil).contains { $0.hasPrefix("HOME=") } == false)
    }

    /// This machine's database: `nobody` is uid 65534 in group 65534 (`getent passwd nobody`).
    @Test func theSystemDatabase() throws {
        let account = try Accounts.system.account(user: "nobody", group: "nogroup").get()
        #expect(account.uid == 65534 && account.gid == 65534 && account.name == "nobody")
        #expect(account.groups.first == 65534)
        #expect(Accounts.system.user("no-such-user-\(UUID().uuidString.prefix(6))") == nil)
        #expect(Accounts.system.runningAs == geteuid())
    }
}
