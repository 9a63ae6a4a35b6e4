import Foundation
import Glibc

/// Where the dashboard listens and the token its actions need, checked before refreshd starts.
///
/// Rules (README, "The web dashboard"): off unless `--http` is given; an address other than
/// loopback is refused without a token file, since the pages show job names, commands' output
/// and results to whoever can reach the port; the token file must be readable by its owner only
/// (no group or other bits), like an ssh key, or it is refused naming the file and its mode.
package struct WebSettings: Sendable, Equatable {
    package var host: String
    package var port: Int
    /// The bearer token actions need; nil: the dashboard is read-only.
    package var token: String?

    package init(host: String, port: Int, token: String? = nil) {
        self.host = host
        self.port = port
        self.token = token
    }

    /// Reads `--http HOST:PORT` and `--http-token-file PATH`.
    ///
    /// - Throws: `WebSettingsError` naming the option or the file and what was expected.
    package static func make(http: String, tokenFile: String?) throws(WebSettingsError) -> WebSettings {
        let (host, port) = try parseAddress(http)
        var token: String?
        if let tokenFile { token = try readToken(tokenFile) }
        if token == nil, !isLoopback(host) {
            throw WebSettingsError("--http \(http): \(host) is not a loopback address; serving the dashboard beyond this machine needs --http-token-file (a 0600 file holding the bearer token actions need)")
        }
        return WebSettings(host: host, port: port, token: token)
    }

    /// `HOST:PORT`, `[V6]:PORT` or `:PORT` (loopback).
    static func parseAddress(_ text: String) throws(WebSettingsError) -> (String, Int) {
        let expected = "expected HOST:PORT such as 127.0.0.1:8080 or [::1]:8080"
        var host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw WebSettingsError("--http \(text): \(expected)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw WebSettingsError("--http \(text): \(expected)")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty { host = "127.0.0.1" }
        guard let port = Int(portText), (0...65_535).contains(port) else {
            throw WebSettingsError("--http \(text): the port must be a number from 0 to 65535 (0: any free port); \(expected)")
        }
        return (String(host), port)
    }

    /// 127.0.0.0/8, ::1 and `localhost`.
    package static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        var address = in_addr()
        if inet_pton(AF_INET, host, &address) == 1 {
            return UInt32(bigEndian: address.s_addr) >> 24 == 127
        }
        var six = in6_addr()
        if inet_pton(AF_INET6, host, &six) == 1 {
            return withUnsafeBytes(of: six) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
        }
        return false
    }

    /// The token: the file's first line, trimmed; the file must be a regular file of at most
    /// 4 KiB with no group or other permission bits.
    static func readToken(_ path: String) throws(WebSettingsError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw WebSettingsError("--http-token-file \(path): \(String(cString: strerror(errno))); expected a file holding the bearer token, mode 0600")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw WebSettingsError("--http-token-file \(path): not a regular file; expected a file holding the bearer token, mode 0600")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw WebSettingsError("--http-token-file \(path): mode \(String(mode, radix: 8).leftPadded(to: 4)) lets other users read the token; expected 0600 (chmod 600 \(path))")
        }
        guard info.st_size <= 4096 else {
            throw WebSettingsError("--http-token-file \(path): \(info.st_size) bytes; expected one line of at most 4096 bytes")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw WebSettingsError("--http-token-file \(path): cannot be read as UTF-8 text; expected one line holding the token")
        }
        let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard token.count >= 16, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw WebSettingsError("--http-token-file \(path): the token must be at least 16 printable ASCII characters without spaces (e.g. from `head -c 24 /dev/urandom | base64`)")
        }
        return token
    }
}

/// A refused `--http` setting, with the message to print.
package struct WebSettingsError: Error, CustomStringConvertible, Equatable {
    package var description: String
    init(_ description: String) { self.description = description }
}
