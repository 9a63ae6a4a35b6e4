/// A durable change of the activity records. The store keeps opaque JSON records per key
/// (`putRecord(table:key:value:)`, `deleteRecord(table:key:)`): `save` puts the activity (as its
/// Codable JSON) under its id, `delete` removes it once the activity is dismissed.
package enum ActivityChange: Sendable, Hashable, Codable {
    case save(Activity)
    case delete(id: String)

    /// The store table the records live in.
    package static let table = "activities"

    /// The record's key.
    package var key: String {
        switch self {
        case let .save(activity): activity.id
        case let .delete(id): id
        }
    }
}
