import RefreshdCore

/// The rules of a job file's `user:` and `group:` (issue 35), each problem at its value.
///
/// ```yaml
/// user: backup
/// group: staff
/// ```
///
/// - both name a command's runs: a job whose work runs inside refreshd (`action:`,
///   `provider: playlist`) is refused, as `limits:` is;
/// - `group:` replaces the user's primary group, so it needs `user:`;
/// - neither holds a template's `{placeholder}`: an instance runs as its template's user (a key
///   listed in an instances file must not choose who runs, as it cannot choose the program);
/// - read to run or check (`Accounts` given), each name must be in the user database, and
///   refreshd must run as root; read for simulation, the names are kept as written.
enum RunAsReader {
    static let userExpected = "a user name or uid, like nobody"
    static let groupExpected = "a group name or gid, like nogroup"
}

extension JobSettings {
    /// Checks `user:` and `group:` and resolves them with `accounts` (if given) into `runAs`.
    mutating func resolveRunAs(_ sink: inout ErrorSink) {
        guard userNode != nil || groupNode != nil else { return }
        let before = sink.errors.count
        if !commandSeen, providerIsPlaylist || actionLocation != nil {
            let node = userNode?.node ?? groupNode!.node
            sink.add(at: node.location, "\(userNode != nil ? "user" : "group"): applies to the job's command, and this job runs "
                + (providerIsPlaylist ? "provider: playlist" : "action: stage-playlist") + " in refreshd; expected command:, or no user:")
        }
        guard let (user, node) = userNode else {
            if let group = groupNode {
                sink.add(at: group.node.location, "group: replaces the primary group of user:; expected user: beside it, or no group:")
            }
            return
        }
        for (key, text, node) in [("user", user, node), ("group", groupNode?.text, groupNode?.node)] {
            guard let text, let node else { continue }
            if text.isEmpty || text.contains(where: { $0 == " " || $0 == ":" || $0 == "\n" }) {
                sink.add(at: node.location, "\(key): expected \(key == "user" ? RunAsReader.userExpected : RunAsReader.groupExpected), "
                    + "found \(EchoText.quoted(text))")
            } else if template.isTemplate, Placeholders.mayHavePlaceholders(text) {
                sink.add(at: node.location, "\(key): cannot hold a placeholder: every instance runs as its template's "
                    + "user; expected a \(key) name, like \(key == "user" ? "nobody" : "nogroup")")
            }
        }
        guard sink.errors.count == before else { return }
        var runAs = RunAs(user: user, group: groupNode?.text)
        if let accounts {
            switch accounts.account(user: user, group: groupNode?.text) {
            case .success(let account): runAs.account = account
            case .failure(.unknownUser):
                sink.add(at: node.location, "user: no user \(EchoText.quoted(user)) on this machine; expected a name or uid "
                    + "of its user database (getent passwd)")
            case .failure(.unknownGroup):
                sink.add(at: groupNode!.node.location, "group: no group \(EchoText.quoted(groupNode!.text)) on this machine; "
                    + "expected a name or gid of its group database (getent group)")
            }
            if accounts.runningAs != 0 {
                sink.add(at: node.location, "user: \(EchoText.quoted(user)) needs refreshd to run as root to switch users, "
                    + "and it runs as uid \(accounts.runningAs); expected refreshd run as root, or no user:")
            }
        }
        if sink.errors.count == before { self.runAs = runAs }
    }
}
