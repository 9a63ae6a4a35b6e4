import RefreshdCore

/// JSON written straight into a byte buffer, byte for byte as Foundation's `JSONEncoder` with
/// `[.prettyPrinted, .sortedKeys]` prints it, and handed out in pieces as it grows.
///
/// What it copies from `JSONEncoder` (swift-foundation's `JSONWriter`): `{`/`[` then a newline,
/// members separated by `,\n`, each at the container's indent plus two spaces, `" : "` between key
/// and value, then a newline and the closing bracket at the container's indent (so an empty one is
/// `[\n\n<indent>]`); strings escaped `\"`, `\\`, `\/`, `\b \f \n \r \t`, other bytes below 0x20 as
/// `\u00xx` (lowercase), everything else as its UTF-8 bytes; integers in decimal. Keys are not
/// sorted here: the caller writes members in the order of their keys' UTF-8 bytes, as
/// `JSONEncoder` sorts them (`object(sorting:)` sorts a dictionary's).
///
/// The buffer is its own memory, not an array: a year of `Jobs/` is 140 MB of JSON, and an
/// array's uniqueness and capacity checks on every appended byte cost more than the bytes.
struct PrettyJSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    private var indent = 0
    private var first = true
    /// `ISO8601`'s text of an instant on `scratchDay` (days since the epoch): see `instant`.
    private var scratch: [UInt8] = []
    private var scratchDay = Int64.min
    private let chunk: Int
    private let sink: (UnsafeRawBufferPointer) throws -> Void

    /// Hands the bytes to `sink` whenever more than `chunk` wait, after a list's element.
    init(chunk: Int, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.chunk = chunk
        self.sink = sink
        capacity = max(256, min(chunk, 1 << 24) + 4096)
        base = .allocate(capacity: capacity)
        scratch.reserveCapacity(64)
    }

    deinit { base.deallocate() }

    /// The bytes still waiting (if any) to the sink.
    mutating func finish() throws {
        guard count > 0 else { return }
        try sink(UnsafeRawBufferPointer(start: base, count: count))
        count = 0
    }

    // MARK: Containers

    /// `{`, the members `body` writes (with `key` and a value each), `}`.
    mutating func object(_ body: (inout PrettyJSONWriter) throws -> Void) throws {
        try container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), body)
    }

    /// `[`, each element as `element` writes it, `]`.
    mutating func array<Elements: Sequence>(_ elements: Elements,
                                            _ element: (inout PrettyJSONWriter, Elements.Element) throws -> Void) throws {
        try container(open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { w in
            for e in elements {
                w.member()
                try element(&w, e)
                if w.count > w.chunk { try w.finish() }
            }
        }
    }

    /// A dictionary as an object, its members in the order of their keys' UTF-8 bytes.
    mutating func object<Value>(sorting members: [String: Value],
                                _ value: (inout PrettyJSONWriter, Value) throws -> Void) throws {
        let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        try object { w in
            for (name, v) in sorted {
                w.key(name)
                try value(&w, v)
            }
        }
    }

    private mutating func container(open: UInt8, close: UInt8, _ body: (inout PrettyJSONWriter) throws -> Void) throws {
        put(open)
        put(0x0A)
        let outer = first
        first = true
        indent += 2
        try body(&self)
        indent -= 2
        first = outer
        put(0x0A)
        spaces(indent)
        put(close)
    }

    /// The separator before a member and its indent.
    @inline(__always)
    private mutating func member() {
        if first {
            first = false
        } else {
            put(UInt8(ascii: ","))
            put(0x0A)
        }
        spaces(indent)
    }

    // MARK: Members and values

    /// `"name" : ` for a key with nothing to escape (the report's field names).
    mutating func key(_ name: StaticString) {
        member()
        put(UInt8(ascii: "\""))
        put(name)
        put("\" : ")
    }

    /// `"name" : ` for a key from data, escaped.
    mutating func key(_ name: String) {
        member()
        string(name)
        put(" : ")
    }

    mutating func string(_ text: String) {
        put(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            guard let start = utf8.baseAddress else { return }
            var mark = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                let escape: UInt8
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape = byte
                case 0x08: escape = UInt8(ascii: "b")
                case 0x0C: escape = UInt8(ascii: "f")
                case 0x0A: escape = UInt8(ascii: "n")
                case 0x0D: escape = UInt8(ascii: "r")
                case 0x09: escape = UInt8(ascii: "t")
                case 0..<0x20: escape = UInt8(ascii: "u")
                default: continue
                }
                put(start + mark, i - mark)
                put(UInt8(ascii: "\\"))
                put(escape)
                if escape == UInt8(ascii: "u") {
                    put("00")
                    put(Self.hex(byte >> 4))
                    put(Self.hex(byte & 0xF))
                }
                mark = i + 1
            }
            put(start + mark, utf8.count - mark)
        }
        put(UInt8(ascii: "\""))
    }

    private static func hex(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// An instant as `ISO8601` writes it (digits and `-:.TZ`, nothing to escape). The date part
    /// (`2026-11-23T`) is `ISO8601`'s, kept while instants fall on the same day (a run's three
    /// do, and so do most runs after it); the time of day is written here.
    mutating func instant(_ value: Instant) {
        let ms = value.milliseconds
        // Years 0...9999, the form `YYYY-MM-DDThh:mm:ss.sssZ`; others as `ISO8601` writes them.
        guard ms >= -62_167_219_200_000, ms < 253_402_300_800_000 else {
            scratch.removeAll(keepingCapacity: true)
            scratchDay = Int64.min
            ISO8601.append(value, to: &scratch)
            put(UInt8(ascii: "\""))
            scratch.withUnsafeBufferPointer { put($0.baseAddress!, $0.count) }
            return put(UInt8(ascii: "\""))
        }
        var day = ms / 86_400_000
        var time = ms % 86_400_000
        if time < 0 { time += 86_400_000; day -= 1 }
        if day != scratchDay {
            scratch.removeAll(keepingCapacity: true)
            ISO8601.append(value, to: &scratch)
            scratchDay = day
        }
        put(UInt8(ascii: "\""))
        scratch.withUnsafeBufferPointer { put($0.baseAddress!, 11) }
        reserve(14)
        let b = base + count
        func two(_ value: Int64, at offset: Int) {
            b[offset] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / 10)
            b[offset + 1] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
        }
        two(time / 3_600_000, at: 0)
        b[2] = UInt8(ascii: ":")
        two(time / 60_000 % 60, at: 3)
        b[5] = UInt8(ascii: ":")
        two(time / 1000 % 60, at: 6)
        b[8] = UInt8(ascii: ".")
        b[9] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: time % 1000 / 100)
        two(time % 100, at: 10)
        b[12] = UInt8(ascii: "Z")
        b[13] = UInt8(ascii: "\"")
        count += 14
    }

    /// An integer in decimal, as `JSONEncoder` prints every integer type.
    mutating func number<Integer: BinaryInteger>(_ value: Integer) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { digits in
            var n = digits.count
            repeat {
                n -= 1
                digits[n] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            put(digits.baseAddress! + n, digits.count - n)
        }
    }

    mutating func bool(_ value: Bool) {
        put(value ? "true" : "false")
    }

    mutating func null() {
        put("null")
    }

    /// A newline outside every container (the report's text ends with one).
    mutating func newline() {
        put(0x0A)
    }

    // MARK: The buffer

    @inline(__always)
    private mutating func reserve(_ more: Int) {
        if count + more > capacity { grow(more) }
    }

    @inline(never)
    private mutating func grow(_ more: Int) {
        let larger = max(capacity * 2, count + more)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafePointer<UInt8>, _ length: Int) {
        reserve(length)
        (base + count).initialize(from: bytes, count: length)
        count += length
    }

    /// Bytes known to need no escaping.
    @inline(__always)
    private mutating func put(_ text: StaticString) {
        put(text.utf8Start, text.utf8CodeUnitCount)
    }

    @inline(__always)
    private mutating func spaces(_ length: Int) {
        reserve(length)
        (base + count).initialize(repeating: UInt8(ascii: " "), count: length)
        count += length
    }
}
