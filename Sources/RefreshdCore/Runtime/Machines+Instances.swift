/// Templates' instances in the composition (issue 23): a sync job's instance lines and an
/// `instances:` file applied through the core's own add and remove, and a removed instance's
/// live activities ended.
extension Machines {
    /// A successful run's instance lines (issue 23): adds and removes in order, then each
    /// template's `set` (the union of the run's `set` lines) made the complete list. Each add
    /// and removal is the core's, as through `ctl`; refusals are logged.
    ///
    /// On a cluster node (issue 32) the lines of a run (`sentAs`: the id its commands take) are
    /// split by the shard of each instance: this shard applies its part, and each other shard's
    /// part is an outbox record in this same commit, which the shared store turns into a
    /// command its leader applies once (`applyInstanceLines`). A `set` reaches every shard.
    mutating func applyInstances(_ lines: [InstanceLines], sentAs: String? = nil, at now: Instant,
                                 into effects: inout [SchedulerEffect]) {
        let start = effects.count
        defer { InstanceLog.foldBatch(&effects, from: start) }
        var lines = lines
        if let place = scheduler.configuration.shardPlace, let sentAs {
            let parts = place.map.split(lines)
            lines = parts[place.shard] ?? []
            for (shard, part) in parts.sorted(by: { $0.key < $1.key }) where shard != place.shard {
                effects.append(.persist(.putRecord(ShardCommand.outbox(id: "\(sentAs)>\(shard)", shard: shard,
                                                                       payload: InstanceLines.payload(part)))))
            }
        }
        var sets: [(template: String, records: [InstanceRecord])] = []
        func remove(_ template: String, _ key: String) {
            do throws(InstanceError) {
                try scheduler.removeInstance(template: template, key: key, at: now, into: &effects)
                endActivities(ofRemoved: InstanceName.identifier(template: template, key: key), at: now, into: &effects)
                withdrawRemovedInstanceWidget(InstanceName.identifier(template: template, key: key), at: now, into: &effects)
            } catch {
                effects.append(.log(.instance(.refused(error))))
            }
        }
        func add(_ record: InstanceRecord) {
            do throws(InstanceError) {
                try addingInstance(record, at: now, into: &effects)
            } catch {
                effects.append(.log(.instance(.refused(error))))
            }
        }
        for line in lines {
            for record in line.add { add(record) }
            for key in line.remove { remove(line.template, key) }
            if let set = line.set {
                if let i = sets.firstIndex(where: { $0.template == line.template }) {
                    sets[i].records += set
                } else {
                    sets.append((line.template, set))
                }
            }
        }
        for (template, records) in sets { set(template, records) }
        func set(_ template: String, _ records: [InstanceRecord]) {
            let keep = Set(records.map(\.key))
            for old in scheduler.instances(of: template) ?? [] where !keep.contains(old.key) { remove(template, old.key) }
            for record in records {
                // An instance already there with these values is left alone (no "kept" line each).
                if let known = scheduler.instance(record.identifier), record.values.isEmpty || known.values == record.values { continue }
                add(record)
            }
        }
    }

    /// Instance lines another shard's sync run sent this shard (issue 32), applied as its own.
    package mutating func applyInstanceLines(_ lines: [InstanceLines], at now: Instant, into effects: inout [SchedulerEffect]) {
        let start = effects.count
        applyInstances(lines, at: now, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
    }

    /// A template's complete list of instances (its `instances:` file at a load or reload):
    /// those not in it removed, missing ones added, the others left alone.
    package mutating func setInstances(_ template: String, _ records: [InstanceRecord], at now: Instant,
                                       into effects: inout [SchedulerEffect]) {
        let start = effects.count
        applyInstances([InstanceLines(template: template, set: records)], at: now, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
    }

    /// A removed instance (issue 23) ends the live activities it owns (pending ones included:
    /// nothing of a removed instance starts later), under the default dismissal policy.
    mutating func endActivities(ofRemoved identifier: String, at now: Instant,
                                        into effects: inout [SchedulerEffect]) {
        guard !activities.activities.isEmpty, scheduler.instance(identifier) == nil else { return }
        let owned = activities.activities.values
            .filter { $0.owner == identifier && [.pending, .active, .stale].contains($0.state) }
            .map(\.id).sorted()
        for id in owned {
            _ = feed(activity: .end(id: id, content: nil, policy: .default, timestamp: now), at: now, into: &effects)
        }
    }
}
