import Foundation

/// Finds the program a job's `command:` names, the way the shell will launch it (no shell involved).
///
/// - A path with a `/` that is relative resolves against the project root (the job folder's
///   parent), so `Scripts/stage` in `Jobs/x.yaml` means `<project>/Scripts/stage` whatever the
///   daemon's working directory is.
/// - An absolute path stays as it is.
/// - A bare name is looked up in the search path (`PATH`), first match wins.
///
/// Resolving at load time turns "command not found" from a failed run at 4 a.m. into an error
/// when the configuration is checked.
struct CommandResolver {
    /// The directory relative commands resolve against.
    var projectRoot: String
    /// A `PATH`-style list of directories; nil or empty means bare names cannot be found.
    var searchPath: String?

    /// The resolved path of `program`, or what is wrong with it.
    func resolve(_ program: String) -> Result<String, Problem> {
        if program.isEmpty {
            return .failure("command: expected a program name or path, found an empty string")
        }
        if program.contains("/") {
            let path = program.hasPrefix("/") ? program : join(projectRoot, program)
            let shown = path == program ? EchoText.quoted(program) : "\(EchoText.quoted(program)) (\(EchoText.escaped(path, limit: 120)))"
            switch Self.check(path) {
            case .missing: return .failure("command: \(shown) does not exist; expected an executable file")
            case .directory: return .failure("command: \(shown) is a directory; expected an executable file")
            case .notExecutable:
                return .failure("command: \(shown) is not executable; expected an executable file (chmod +x)")
            case .executable: return .success(path)
            }
        }
        let directories = (searchPath ?? "").split(separator: ":", omittingEmptySubsequences: true)
        for directory in directories {
            let candidate = join(String(directory), program)
            if case .executable = Self.check(candidate) { return .success(candidate) }
        }
        let searched = searchPath.map { $0.isEmpty ? "PATH is empty" : "searched \($0)" } ?? "PATH is not set"
        return .failure(Problem("command: \(EchoText.quoted(program)) was not found on PATH (\(EchoText.escaped(searched, limit: 200))); "
            + "expected an executable in one of its directories, or a path such as Scripts/\(EchoText.escaped(program))"))
    }

    enum FileState { case missing, directory, notExecutable, executable }

    /// Whether `path` is an existing, executable, non-directory file.
    static func check(_ path: String) -> FileState {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue { return .directory }
        return FileManager.default.isExecutableFile(atPath: path) ? .executable : .notExecutable
    }

    private func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

/// Path helpers for the loader, kept free of `URL` so paths are shown exactly as joined.
enum PathText {
    /// `directory/name`, without doubling a trailing slash.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The absolute, standardized parent of `directory` (`Jobs` → `/current/dir`).
    static func projectRoot(of directory: String) -> String {
        var absolute = directory.hasPrefix("/") ? directory
            : join(FileManager.default.currentDirectoryPath, directory)
        absolute = NSString(string: absolute).standardizingPath
        let parent = NSString(string: absolute).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }
}
