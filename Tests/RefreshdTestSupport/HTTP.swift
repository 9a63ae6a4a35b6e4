import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw HTTP/1.1 exchange over a loopback TCP socket: what a browser or an attacker sends,
/// byte for byte. Returns the status code (nil: the connection closed without a response) and
/// the whole response text.
public enum HTTP {
    public static func connect(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); return nil }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    public static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    public static func readAll(_ fd: Int32) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: data, as: UTF8.self)
    }

    public static func status(_ response: String) -> Int? {
        guard response.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(response.dropFirst(9).prefix(3))
    }

    /// One request (`Connection: close`), its response.
    public static func request(_ port: Int, _ target: String, method: String = "GET", headers: [String] = []) -> (status: Int?, text: String) {
        guard let fd = connect(port) else { return (nil, "") }
        defer { close(fd) }
        let head = ([ "\(method) \(target) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Connection: close", "Content-Length: 0"] + headers)
            .joined(separator: "\r\n") + "\r\n\r\n"
        guard send(fd, Array(head.utf8)) else { return (nil, "") }
        let text = readAll(fd)
        return (status(text), text)
    }

    /// The body of a response (after the blank line).
    public static func body(_ text: String) -> String {
        guard let range = text.range(of: "\r\n\r\n") else { return "" }
        return String(text[range.upperBound...])
    }
}
