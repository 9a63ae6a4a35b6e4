import Testing
@testable import RefreshdCore

/// The Foundation-free JSON helpers: object checks, `progress`, and merging an owner's failure.
@Suite struct ActivityJSONTests {
    @Test(arguments: [#"{}"#, #" {"a": [1, -2.5e3, true, false, null, {"b": "\u00e9\n"}]} "#, #"{"progress":0.42}"#])
    func validObjects(_ text: String) {
        #expect(ActivityJSON.objectError(text) == nil)
    }

    @Test(arguments: [
        ("", "expected a JSON object, found nothing"),
        ("[]", #"expected a JSON object, found "[" at byte 0"#),
        (#"{"a":1,}"#, #"expected a string, found "}" at byte 7"#),
        (#"{"a":01}"#, #"expected "," or "}" in an object, found "1" at byte 6"#),
        (#"{"a":1} x"#, #"expected the end of the JSON object at byte 8, found "x" at byte 8"#),
        (#"{"a":"\q"}"#, #"expected a valid escape, found "q" at byte 7"#),
        (#"{"a":tru}"#, #"expected true, found "}" at byte 8"#),
    ])
    func invalidObjectsSayWhatWasExpected(_ text: String, _ message: String) {
        #expect(ActivityJSON.objectError(text) == message)
    }

    @Test func deepNestingIsRefusedNotRecursedInto() {
        let deep = #"{"a":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(ActivityJSON.objectError(deep) == "expected at most 64 levels of nesting")
    }

    @Test func progressIsAFractionShownAsAPercentage() {
        #expect(ActivityJSON.progressPercent(in: #"{"progress":0.5}"#) == 50)
        #expect(ActivityJSON.progressPercent(in: #"{"nested":{"progress":0.9},"progress":1.5}"#) == 100)
        #expect(ActivityJSON.progressPercent(in: #"{"progress":"half"}"#) == nil)
        #expect(ActivityJSON.progressPercent(in: #"{"\u0070rogress":0.25}"#) == 25)
        #expect(ActivityJSON.progressPercent(in: #"{}"#) == nil)
    }

    @Test func aFailureIsMergedOrWrapped() {
        #expect(ActivityJSON.mergingFailure(into: #"{"progress":0.3}"#, outcome: .failure, reason: "exit 2")
                == #"{"progress":0.3,"failure":{"outcome":"failure","reason":"exit 2"}}"#)
        #expect(ActivityJSON.mergingFailure(into: #"{}"#, outcome: .crashed, reason: nil) == #"{"failure":{"outcome":"crashed"}}"#)
        #expect(ActivityJSON.mergingFailure(into: "not json", outcome: .expired, reason: "a \"quote\"\n")
                == #"{"failure":{"outcome":"expired","reason":"a \"quote\"\n"},"content":"not json"}"#)
        let merged = ActivityJSON.mergingFailure(into: #"{"failure":1,"x":[1,2]}"#, outcome: .interrupted, reason: nil)
        #expect(merged == #"{"x":[1,2],"failure":{"outcome":"interrupted"}}"#)
        #expect(ActivityJSON.objectError(merged) == nil)
    }
}
