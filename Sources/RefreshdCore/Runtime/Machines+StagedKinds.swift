/// Staging templates' reload kinds (issue 23): a staging template whose
/// `stage-playlist.widget` holds placeholders (`wallpaper-{user}`) makes each instance's run
/// reload the kind its values make (`InstanceKind`: each '@' "-at-"). Two instances of one
/// template whose values make the same kind (`a@b` and `a-at-b` both `wallpaper-a-at-b`) would
/// reload one widget, each staging into its own folder: the widget would show whichever folder
/// it reads, the other user's staging reloading it for nothing. So the second add is refused,
/// naming both instances and `stage-playlist.widget`, as a timeline template's instance whose
/// kind is taken is (`addingInstance`). Instances of two different staging templates may
/// reload one kind (a morning and an evening stager of the same widget), as two jobs may.
///
/// The rule is the composition's, not the core's: it holds on both hosts, before anything of the
/// add is committed. The index of kinds is built from the instances when first needed after a
/// restore or a template's (re)declaration, then kept at each add; an entry whose instance was
/// removed or changed values since is found stale when read, so removals need not touch it.
extension Machines {
    /// The index slot of a kind of a template.
    static func stagedSlot(_ template: String, _ kind: String) -> String { template + "\u{0}" + kind }

    /// The kind an instance of a staging template reloads, checked against its template's other
    /// instances; nil when the template is not a staging template with a kind pattern, or when
    /// the values make no kind (the core refuses those, naming the parameter).
    ///
    /// - Throws: `badValues` when another instance of the template already reloads that kind.
    mutating func stagedKindChecked(_ record: InstanceRecord) throws(InstanceError) -> (slot: String, identifier: String)? {
        guard let spec = stagingTemplates[record.template], let pattern = spec.stagedKind else { return nil }
        let checked = try SchedulerCore.checked(record, of: spec)
        guard case let .success(kind) = InstanceKind.fill(pattern, checked.values, what: "stage-playlist.widget") else { return nil }
        let slot = Self.stagedSlot(record.template, kind)
        if let owner = stagedKindOwner(slot, kind: kind), owner != checked.identifier {
            throw .badValues(template: record.template, key: record.key, problem: "stage-playlist.widget "
                + "\(EchoText.quoted(pattern, limit: 80)) makes \(EchoText.quoted(kind, limit: 80)), the widget instance \(owner) "
                + "already reloads (\(InstanceKind.derivation)); two instances cannot reload one widget: expected values "
                + "that make a kind of their own")
        }
        return (slot, checked.identifier)
    }

    /// The instance that reloads `kind` (in `slot`), the index built first when needed; a stale
    /// entry (its instance removed, or its values changed) is dropped.
    mutating func stagedKindOwner(_ slot: String, kind: String) -> String? {
        if stagedKinds == nil { stagedKinds = indexedStagedKinds() }
        guard let owner = stagedKinds?[slot] else { return nil }
        guard let record = scheduler.instance(owner), let spec = stagingTemplates[record.template], let pattern = spec.stagedKind,
              case let .success(now) = InstanceKind.fill(pattern, spec.values(of: record), what: "stage-playlist.widget"),
              now == kind else {
            stagedKinds?[slot] = nil
            return nil
        }
        return owner
    }

    /// Every staging template's instances' kinds (the first instance of a kind, in the core's
    /// order, holds it: a state saved before this rule may hold two).
    func indexedStagedKinds() -> [String: String] {
        var index: [String: String] = [:]
        for (template, spec) in stagingTemplates {
            guard let pattern = spec.stagedKind else { continue }
            for record in scheduler.instances(of: template) ?? [] {
                guard case let .success(kind) = InstanceKind.fill(pattern, spec.values(of: record), what: "stage-playlist.widget")
                else { continue }
                let slot = Self.stagedSlot(template, kind)
                if index[slot] == nil { index[slot] = record.identifier }
            }
        }
        return index
    }
}
