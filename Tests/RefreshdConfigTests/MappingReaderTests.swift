import Testing
import RefreshdCore
@testable import RefreshdConfig

@Suite struct MappingReaderTests {
    @Test(arguments: [
        ("allowence", "allowance"), ("comand", "command"), ("identifer", "identifier"), ("Kind", "kind"),
        ("enviroment", "environment"), ("namepsace", "namespace"), ("schedule", nil), ("x", nil),
        ("catchup", "catch-up"), ("time-zone", "timezone"), ("timezon", "timezone"), ("fixed_jitter", "fixed-jitter"),
        ("jiter", "jitter"), ("accurracy", "accuracy"), ("mised", "missed"),
    ] as [(String, String?)])
    func suggestsKeysWithinTwoEdits(typo: String, suggestion: String?) {
        #expect(MappingReader.closest(to: typo, in: JobFileParser.keys) == suggestion)
    }

    @Test func editDistance() {
        #expect(EditDistance.between("kitten", "sitting") == 3)
        #expect(EditDistance.between("", "abc") == 3)
        #expect(EditDistance.between("same", "same") == 0)
    }

    @Test func nestedUnknownKeysNameTheirSetting() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            resubmit:
              afer: 6h
            """))
        #expect(error.position == "4:3")
        #expect(error.message == "unknown key \"afer\" in resubmit (did you mean \"after\"?)")
    }

    @Test func misspeltRequiredKeyIsNotAlsoReportedMissing() throws {
        let error = try #require(TestSupport.onlyError("identifier: a.b\ncomand: [true]\n"))
        #expect(error.description == "Jobs/test.yaml:2:1: unknown key \"comand\" (did you mean \"command\"?)")
    }

    @Test func nonScalarKeyIsReported() throws {
        let error = try #require(TestSupport.onlyError("identifier: a.b\ncommand: [true]\n? [x]\n: 1\n"))
        #expect(error.position == "3:3")
        #expect(error.message.hasSuffix("found a list"))
    }
}
