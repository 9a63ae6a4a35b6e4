/// Splits a shell line into words, for tests that run the README's command lines as written:
/// single and double quotes, backslash escapes, and a `#` comment at the start of a word. No
/// expansions (the README's lines need none). One copy for every test target that needs it.
public func shellWords(_ line: String) -> [String] {
    var words: [String] = []
    var word = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for c in line {
        if escaped { word.append(c); escaped = false; continue }
        if let q = quote {
            if c == q { quote = nil } else if c == "\\" && q == "\"" { escaped = true } else { word.append(c) }
            continue
        }
        switch c {
        case "'", "\"": quote = c; inWord = true
        case "\\": escaped = true; inWord = true
        case " ", "\t":
            if inWord { words.append(word); word = ""; inWord = false }
        case "#" where !inWord:
            return words
        default: word.append(c); inWord = true
        }
    }
    if inWord { words.append(word) }
    return words
}
