/// One value of a job file, as `YAMLComposer` builds it: a scalar's source text, or a list or
/// mapping of values, each with the line and column where it starts.
///
/// Values are kept as text (no tag resolution: `8080` stays `"8080"`), and an alias is the node
/// it names, shared rather than copied. Nothing hashes or compares whole nodes, so a node's cost
/// is what reading it needs.
enum YAMLNode: Sendable {
    case scalar(Scalar)
    case sequence([YAMLNode], location: Location)
    case mapping([(key: YAMLNode, value: YAMLNode)], location: Location)

    /// A scalar's text (escapes undone, lines folded) and how it was written.
    struct Scalar: Sendable {
        var string: String
        var style: Style
        /// Where the scalar starts (its tag or anchor, if it has one).
        var location: Location
    }

    /// How a scalar was written: which rules turned its source into its text.
    enum Style: Sendable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    /// The same value placed at `location`: an alias is reported where it is written. Shares
    /// the value's storage (nothing is copied).
    func relocated(to location: Location) -> YAMLNode {
        switch self {
        case .scalar(var scalar):
            scalar.location = location
            return .scalar(scalar)
        case .sequence(let items, _): return .sequence(items, location: location)
        case .mapping(let pairs, _): return .mapping(pairs, location: location)
        }
    }

    /// Where the value starts, 1-based.
    var location: Location {
        switch self {
        case .scalar(let scalar): scalar.location
        case .sequence(_, let location), .mapping(_, let location): location
        }
    }
}
