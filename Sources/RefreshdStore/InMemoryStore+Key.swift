/// The in-memory store's key: an identifier compared and hashed by its bytes, as SQLite's
/// BINARY collation compares it (Swift's `==` on `String` is canonical equivalence).
extension InMemoryStore {
    /// An identifier compared by its UTF-8 bytes (SQLite's BINARY collation).
    struct Key: Hashable, Comparable, Sendable {
        let string: String

        init(_ string: String) { self.string = string }

        static func == (a: Key, b: Key) -> Bool {
            let (x, y) = (a.string.utf8, b.string.utf8)
            guard x.count == y.count else { return false }
            // Native strings are contiguous UTF-8: compare the bytes directly.
            if let same = x.withContiguousStorageIfAvailable({ p in
                y.withContiguousStorageIfAvailable { q in bytesEqual(UnsafeRawBufferPointer(p), UnsafeRawBufferPointer(q)) }
            }), let same { return same }
            return x.elementsEqual(y)
        }

        /// Two equally long byte buffers compared eight bytes at a time (identifiers are short,
        /// and keys are compared at every lookup of every commit).
        private static func bytesEqual(_ p: UnsafeRawBufferPointer, _ q: UnsafeRawBufferPointer) -> Bool {
            var i = 0
            let count = p.count
            while i + 8 <= count {
                if p.loadUnaligned(fromByteOffset: i, as: UInt64.self) != q.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                    return false
                }
                i += 8
            }
            while i < count {
                if p[i] != q[i] { return false }
                i += 1
            }
            return true
        }

        static func < (a: Key, b: Key) -> Bool { precedes(a.string, b.string) }

        static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

        func hash(into hasher: inout Hasher) {
            // Native strings are contiguous: hash their bytes without copying the string.
            let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
                hasher.combine(bytes: UnsafeRawBufferPointer($0))
            }
            if hashed == nil {
                var copy = string
                copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            }
        }
    }
}
