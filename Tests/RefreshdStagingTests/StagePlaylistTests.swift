import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdStaging

@Suite struct StagePlaylistTests {
    private func context(_ container: String?, started: Instant) -> ActionContext {
        ActionContext(order: LaunchOrder(runID: 1, identifier: "example.wallpaper.stage", kind: .appRefresh,
                                         started: started, deadline: started + .seconds(30), attempt: 1),
                      sharedContainer: container)
    }

    @Test func theActionStagesTomorrowFromTheRunsStartAndAsksForAReload() throws {
        let fixture = try StagingFixture()
        let action = StagePlaylist.action(fixture.options)
        #expect(action.name == "stage-playlist")
        let result = action.body(context(fixture.container, started: fixture.now))
        #expect(result.success, "\(result.log)")
        #expect(result.results == [#"{"reloadTimelines":"example.wallpaper"}"#])
        #expect(fixture.playlist(fixture.tomorrow) != nil)
    }

    @Test func anExpiredContextStopsBeforeTheFirstFile() throws {
        let fixture = try StagingFixture()
        let expired = context(fixture.container, started: fixture.now)
        expired.expire()
        let result = StagePlaylist.action(fixture.options).body(expired)
        #expect(!result.success && result.results.isEmpty)
        #expect(result.log.last?.contains("expired while staging 2026-11-24") == true)
        #expect(fixture.playlistDates().isEmpty)
    }

    @Test func withoutASharedContainerItFailsSayingSo() throws {
        let fixture = try StagingFixture()
        let result = StagePlaylist.action(fixture.options).body(context(nil, started: fixture.now))
        #expect(!result.success && result.log == ["stage-playlist: no shared container configured"])
    }

    /// The job file's action is data (`ActionSpec.stagePlaylist`); staging's binding makes the
    /// worker action of it, and a host without the binding fails the run saying why.
    @Test func theBindingTurnsTheSpecIntoTheWorkerAction() throws {
        let fixture = try StagingFixture()
        let spec = ActionSpec.stagePlaylist(fixture.options)
        let action = StagingActions.binding.action(for: spec)
        #expect(action.name == "stage-playlist" && action.worker != nil)
        let result = action.body(context(fixture.container, started: fixture.now))
        #expect(result.success, "\(result.log)")
        #expect(fixture.playlist(fixture.tomorrow) != nil)

        let unbound = ActionBinding.none.action(for: spec).body(context(fixture.container, started: fixture.now))
        #expect(!unbound.success && unbound.log.first?.hasPrefix("no built-in action \"stage-playlist\" in this host") == true)
        let provider = StagingActions.binding.action(for: .playlistProvider(zone: "UTC"))
        #expect(provider.name == "playlist" && provider.worker == nil)
    }
}
