import Foundation
import Testing
@testable import RefreshdDashboard
@testable import RefreshdWeb

/// `--http` and `--http-token-file`: what is refused, and how it is said.
@Suite struct WebSettingsTests {
    @Test func loopbackNeedsNoTokenAnythingElseDoes() throws {
        #expect(try WebSettings.make(http: "127.0.0.1:8080", tokenFile: nil) == WebSettings(host: "127.0.0.1", port: 8080))
        #expect(try WebSettings.make(http: "[::1]:0", tokenFile: nil).host == "::1")
        #expect(try WebSettings.make(http: ":9000", tokenFile: nil).host == "127.0.0.1")
        #expect(WebSettings.isLoopback("127.8.9.10") && WebSettings.isLoopback("localhost"))
        #expect(!WebSettings.isLoopback("0.0.0.0") && !WebSettings.isLoopback("192.168.1.2") && !WebSettings.isLoopback("::"))
        #expect(throws: WebSettingsError("--http 0.0.0.0:8080: 0.0.0.0 is not a loopback address; serving the dashboard beyond this machine needs --http-token-file (a 0600 file holding the bearer token actions need)")) {
            try WebSettings.make(http: "0.0.0.0:8080", tokenFile: nil)
        }
        for bad in ["8080", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", "[::1]8080"] {
            #expect(throws: WebSettingsError.self) { try WebSettings.make(http: bad, tokenFile: nil) }
        }
    }

    @Test func theTokenFileMustBeTheOwnersAlone() throws {
        let project = Project()
        defer { project.remove() }
        let path = project.root + "/token"
        try project.write("token", "s3cret-token-0123456789\n", mode: 0o644)
        do {
            _ = try WebSettings.make(http: "0.0.0.0:8080", tokenFile: path)
            Issue.record("a 0644 token file was accepted")
        } catch {
            #expect(error.description == "--http-token-file \(path): mode 0644 lets other users read the token; expected 0600 (chmod 600 \(path))")
        }
        chmod(path, 0o600)
        #expect(try WebSettings.make(http: "0.0.0.0:8080", tokenFile: path).token == "s3cret-token-0123456789")
        try project.write("short", "abc\n", mode: 0o600)
        #expect(throws: WebSettingsError.self) { try WebSettings.make(http: "127.0.0.1:1", tokenFile: project.root + "/short") }
        #expect(throws: WebSettingsError.self) { try WebSettings.make(http: "127.0.0.1:1", tokenFile: project.root + "/missing") }
    }

    @Test func refreshdRunRefusesABadTokenFileNamingIt() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("token", "s3cret-token-0123456789\n", mode: 0o640)
        let (status, errors) = try Daemon.run(["run", "--jobs", project.jobs, "--state", project.state,
                                               "--http", "127.0.0.1:0", "--http-token-file", project.root + "/token"])
        #expect(status == 1)
        #expect(errors.contains("--http-token-file \(project.root)/token: mode 0640 lets other users read the token"), "\(errors)")
        let (open, openErrors) = try Daemon.run(["run", "--jobs", project.jobs, "--state", project.state, "--http", "0.0.0.0:0"])
        #expect(open == 1 && openErrors.contains("is not a loopback address"), "\(openErrors)")
    }

    @Test func interpolatedValuesAreEscapedAndHTMLIsNot() {
        let name = "<script>alert('x')</script> & \"q\""
        let inner: HTML = "<b>\(name)</b>"
        let page: HTML = "<p title=\"\(name)\">\(inner)</p>"
        #expect(page.text == "<p title=\"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;\"><b>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;</b></p>")
        #expect(HTML.segment("a/b?c#d e.f") == "a%2Fb%3Fc%23d%20e.f")
        #expect(HTML.escape("a\u{1B}[31mb") == "a [31mb")
    }

    @Test func schedulesInWords() {
        #expect(Words.calendar("*-*-* 04:00 [Europe/Paris]") == "every day at 04:00 (Europe/Paris)")
        #expect(Words.calendar("0 6 * * *") == "every day at 06:00")
        #expect(Words.calendar("Mon..Fri *-*-* 06:30") == "on Mon..Fri at 06:30")
        #expect(Words.calendar("*-*~01 [UTC]") == "on calendar “*-*~01” (UTC)")
        #expect(Words.milliseconds(600_000) == "10 min" && Words.milliseconds(1500) == "1.5 s")
    }
}
