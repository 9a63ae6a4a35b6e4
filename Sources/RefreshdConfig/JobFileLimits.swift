/// The bounds a job file must stay within, checked before anything is built from it.
///
/// A job file is a handful of settings: a few hundred bytes, a few dozen values. The limits are
/// far above that, and far below what would let a file (by mistake or on purpose) make `check`
/// or the daemon hang, run out of memory, flood the terminal, or start commands that the kernel
/// would refuse with E2BIG at every launch.
package enum JobFileLimits {
    /// The largest job file read, in bytes (1 MiB). Larger files are refused from their size
    /// alone, without being read.
    package static let maximumFileSize = 1 << 20

    /// Errors shown per file (20); one more line says how many more there were.
    package static let maximumErrorsPerFile = 20

    /// Values (scalars, lists and mappings) in one file, each alias counted as a full copy of
    /// what it names (10,000). Refusing at the alias that crosses it stops "billion laughs"
    /// alias bombs before anything expands them.
    package static let maximumValues = 10_000

    /// Aliases (`*name`) in one file (100).
    package static let maximumAliases = 100

    /// Nesting of lists and mappings, aliases expanded (32 levels; a job file needs 3).
    package static let maximumDepth = 32

    /// The longest single argument or `NAME=value` environment string, in bytes (131,071): the
    /// kernel's MAX_ARG_STRLEN (131,072) counts the terminating NUL.
    package static let maximumExecStringBytes = 131_071

    /// The command's arguments and the job's environment together, in bytes with one NUL per
    /// string (1 MiB), leaving room under the usual 2 MiB ARG_MAX for refreshd's own environment.
    package static let maximumExecTotalBytes = 1 << 20

    /// Scalars of a value echoed in an error message before it is cut with `…` (60).
    package static let maximumEchoedScalars = 60
}
