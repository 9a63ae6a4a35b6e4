/// A staging failure that is not one image's: the container or the library cannot be used.
struct StagingFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
