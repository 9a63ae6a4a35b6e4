import Foundation
import Testing

/// `Examples/Embedding`, built by the suite, run as a user would run it: the public embedding
/// API declares a handler, submits a request, runs the loop and stops it from another thread.
@Suite struct EmbeddingExampleTests {
    @Test func theExampleRunsItsHandlerAndStops() throws {
        let result = try CLI.run(["1.5"], timeout: 30, executable: CLI.built("refreshd-embedding-example"))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        // The first run starts at once and completes; the resubmit policy brings the next a
        // second later (how many fit in 1.5 s depends on the machine, at least one does).
        #expect(lines.first?.hasPrefix("run 1 of com.example.embedding.refresh started, deadline ") == true, "\(lines)")
        #expect(lines.contains("run 1 completed (1 so far)"), "\(lines)")
        let last = try #require(lines.last)
        #expect(last.hasPrefix("stopped after 1.5 s: "), "\(last)")
        #expect(last.hasSuffix("pending: [\"com.example.embedding.refresh\"]"), "\(last)")
    }
}
