/// Why a provider's timeline was refused: a failed reload, with the reason the log and the
/// status show. Each case names what was wrong and what was expected.
package enum TimelineError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooManyEntries(count: Int, limit: Int)
    case entryTooLarge(index: Int, bytes: Int, limit: Int)
    case emptyContent(index: Int)
    case relevanceNotFinite(index: Int)
    case negativeDuration(index: Int)

    package var description: String {
        switch self {
        case let .tooManyEntries(count, limit):
            "timeline has \(count) entries; expected at most \(limit)"
        case let .entryTooLarge(index, bytes, limit):
            "entry \(index) content is \(bytes) bytes; expected at most \(limit) (light content such as an asset identifier, not the asset)"
        case let .emptyContent(index):
            "entry \(index) has empty content; expected compact JSON text such as {\"asset\":\"a1\"}"
        case let .relevanceNotFinite(index):
            "entry \(index) relevance is not a finite number"
        case let .negativeDuration(index):
            "entry \(index) duration is negative; expected 0 or more"
        }
    }
}
