import Foundation
import RefreshdCore
import RefreshdRuntime

/// A modelled `action: stage-playlist` run: which dates it stages and with what, read from the
/// action's options (their canonical text, the `ActionSpec` fingerprint). No image is decoded:
/// the run takes its job's modelled duration and outcome, and its dates go into the
/// `ContainerModel` when it succeeds.
struct StagingModel: Sendable, Hashable {
    /// Switch times, minutes after local midnight.
    var switches: [Int]
    var zone: TimeZone
    var widgetKind: String
    /// The folder of the shared container it stages into (an instance's: filled, `filled`).
    var folder: String
    var stagesToday: Bool
    var todayIfMissing: Bool
    var seed: String

    /// The model of a `stage-playlist` action's options; nil when its fingerprint is not options text.
    init?(fingerprint: String) {
        let fields = SimulatedActions.fields(fingerprint)
        guard let kind = fields["widget"], let times = fields["switch-times"] else { return nil }
        let minutes = times.split(separator: ",").compactMap { SimulatedActions.minute(String($0)) }
        guard !minutes.isEmpty else { return nil }
        switches = Array(Set(minutes)).sorted()
        zone = fields["timezone"].flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        widgetKind = kind
        folder = fields["folder"] ?? "wallpaper"
        stagesToday = fields["day"] == "today"
        todayIfMissing = fields["today-if-missing"] == "true"
        seed = fields["seed"] ?? "0"
    }

    /// The model of an instance's run (issue 23): its folder filled with the instance's values
    /// as the real action's options are (`ActionSpec.filled`), its reload kind as an instance's
    /// kind is (`InstanceKind`: each '@' "-at-").
    func filled(_ values: [String: String]) -> StagingModel {
        var model = self
        if Placeholders.mayHavePlaceholders(folder) { model.folder = Placeholders.fill(folder, values) }
        if Placeholders.mayHavePlaceholders(widgetKind), case let .success(kind) = InstanceKind.fill(widgetKind, values) {
            model.widgetKind = kind
        }
        return model
    }

    /// Whether an instance's run differs from its template's (its folder or kind holds placeholders).
    var hasPlaceholders: Bool { Placeholders.mayHavePlaceholders(widgetKind) || Placeholders.mayHavePlaceholders(folder) }

    /// The days a run at `now` stages: its target date, and today first when today is missing
    /// from its folder and `today-if-missing` is set.
    func days(at now: Instant, container: ContainerModel) -> [String: ContainerModel.Day] {
        let today = SimulatedActions.date(of: now, zone: zone)
        let tomorrow = SimulatedActions.date(of: now, zone: zone, plusDays: 1)
        var dates = [stagesToday ? today : tomorrow]
        if !stagesToday, todayIfMissing, container.day(today, folder: folder) == nil { dates.append(today) }
        return Dictionary(dates.map { date in
            (date, ContainerModel.Day(switches: switches, assets: switches.indices.map { "\(date)-\(seed)-\($0 + 1)" }))
        }, uniquingKeysWith: { a, _ in a })
    }

    /// What the real action returns when its run's expiration stops it (the stager looks at
    /// `isExpired` between renditions and inside decodes): a failure, the container unchanged.
    func expiredResult(at now: Instant) -> ActionResult {
        let date = SimulatedActions.date(of: now, zone: zone, plusDays: stagesToday ? 0 : 1)
        return ActionResult(success: false, log: ["expired while staging \(date) (modelled: no rendition decoded); "
            + "the container is unchanged otherwise and the next run continues"])
    }

    /// What the real action writes on success: the reload of the widget kind.
    var resultLine: String { "{\"reloadTimelines\":\"\(widgetKind)\"}" }
}
