extension RandomAccessCollection where Element: Comparable {
    /// The first index whose element is not below `value` (the end when every element is): where
    /// `value` is, or would be inserted, in an ascending collection. Shared by the in-memory
    /// store's run table and the simulation journal's slot lists.
    package func lowerBound(of value: Element) -> Index {
        lowerBound(of: value) { $0 }
    }
}

extension RandomAccessCollection {
    /// `lowerBound(of:)` for a collection ascending by `key` (the simulation's run history, in
    /// run id order).
    package func lowerBound<Key: Comparable>(of value: Key, by key: (Element) -> Key) -> Index {
        var low = startIndex, count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if key(self[middle]) < value {
                low = index(after: middle)
                count -= half + 1
            } else {
                count = half
            }
        }
        return low
    }
}
