extension PathText {
    /// `Tests/Scenarios/../../Jobs` as `Jobs`: `.` parts dropped and each `..` taking away the
    /// part before it, by the text alone (no file system access, so no symbolic link is followed).
    /// A leading `..` stays; an empty result is `.`.
    static func lexicallyNormalized(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." { parts.removeLast() } else if !absolute { parts.append(part) }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
