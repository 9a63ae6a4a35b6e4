import Foundation
import RefreshdCore

/// Reads `on-failure:` and `on-recovery:` (issue 25): `{command: [argv...]}` or
/// `{webhook: "https://..."}`, each with an optional `timeout:` (default 10 s, at most 5 min).
/// A bad value is a located config error saying what was expected.
enum NotifierReader {
    static let example = "{webhook: \"https://hooks.example.net/refreshd\", timeout: 10s} or {command: [Scripts/page, --team, ops]}"
    /// Longer than the longest wait between retries would make no sense: a slow receiver is a
    /// failing one.
    static let maximumTimeout: Duration = .seconds(300)
    static let maximumURLBytes = 2048

    static func read(_ reader: ValueReader, resolver: CommandResolver, _ sink: inout ErrorSink) -> Notifier? {
        let key = reader.key
        guard let fields = MappingFields(reader, known: ["command", "webhook", "timeout"], example: example, &sink) else { return nil }
        let before = sink.errors.count
        var timeout = Notifier.defaultTimeout
        if let value = fields.optional("timeout"), let read = value.duration(&sink, positive: true) {
            if read > maximumTimeout {
                sink.add(at: value.node.location, "\(key).timeout: expected a duration of at most 5m, found \(EchoText.quoted(value.node.scalarText ?? ""))")
            } else {
                timeout = read
            }
        }
        var target: Notifier.Target?
        switch (fields.optional("command"), fields.optional("webhook")) {
        case (nil, nil):
            // A misspelt command: or webhook: was pointed out already, with its suggestion.
            guard !sink.suggestedKeys.contains("\(key).command"), !sink.suggestedKeys.contains("\(key).webhook") else { break }
            sink.add(at: reader.node.location, "\(key): expected command: or webhook: (like \(example)), found neither")
        case (_?, let webhook?):
            sink.add(at: fields.keyLocation("webhook") ?? webhook.node.location,
                     "\(key): expected either command: or webhook:, found both")
        case (let command?, nil):
            let renamed = ValueReader(key: "\(key).command", node: command.node)
            if let argv = SettingRules.command(renamed, resolver: resolver, &sink) {
                target = .command(argv: argv, workingDirectory: resolver.projectRoot)
            }
        case (nil, let webhook?):
            if let url = webhookURL(webhook, &sink) { target = .webhook(url: url) }
        }
        guard sink.errors.count == before, let target else { return nil }
        return Notifier(target, timeout: timeout)
    }

    /// An absolute `http://` or `https://` URL with a host, without spaces or control characters.
    static func webhookURL(_ reader: ValueReader, _ sink: inout ErrorSink) -> String? {
        let expected = "an http:// or https:// URL like https://hooks.example.net/refreshd"
        guard let text = reader.string(&sink, expected: expected) else { return nil }
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            sink.add(at: reader.node.location, "\(reader.key): expected \(expected), found \(EchoText.quoted(text))")
            return nil
        }
        guard text.utf8.count <= maximumURLBytes else {
            sink.add(at: reader.node.location, "\(reader.key): expected a URL of at most \(maximumURLBytes) bytes, found \(text.utf8.count)")
            return nil
        }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }),
              let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            sink.add(at: reader.node.location, "\(reader.key): expected \(expected) (a host, no spaces), found \(EchoText.quoted(text))")
            return nil
        }
        return text
    }
}
