import RefreshdCore
import RefreshdRuntime

/// Templates and their instances in the embedding API (issue 23): one definition, many
/// instances `identifier[key]`, each with its own request, retry backoff and history.
///
/// ```swift
/// scheduler.registerTemplate(TaskDefinition(identifier: "com.example.feed", resubmit: .after(.seconds(3600))),
///                            parameters: ["user"],
///                            command: CommandJob(argv: ["/usr/local/bin/refresh-feed", "--user", "{user}"]))
/// try scheduler.addInstance(template: "com.example.feed", key: "alice")
/// scheduler.instances(of: "com.example.feed")  // [alice]
/// try scheduler.removeInstance(template: "com.example.feed", key: "alice")
/// ```
///
/// Register templates before `restoreSavedState()` (as identifiers), so the instances saved in
/// the state file come back declared with their requests.
extension RefreshScheduler {
    /// Declares a template whose instances' runs spawn `command`, its `{name}` placeholders (in
    /// arguments and environment values, never a shell string) filled with each instance's values.
    public func registerTemplate(_ definition: TaskDefinition, parameters: [String],
                                 firstRequest: FirstRequest = .core, command: CommandJob) {
        runtime.declareTemplate(definition, parameters: parameters, firstRequest: firstRequest, handler: .command(command))
    }

    /// Declares a template whose instances run in process: the task's `identifier` is the
    /// instance's (`template[key]`; `InstanceName.split` gives the key back).
    public func registerTemplate(_ definition: TaskDefinition, parameters: [String],
                                 firstRequest: FirstRequest = .core,
                                 launchHandler: @escaping @Sendable (RefreshTask) -> Void) {
        runtime.declareTemplate(definition, parameters: parameters, firstRequest: firstRequest,
                                handler: .inProcess(launchHandler))
    }

    /// Adds an instance (and its first request), committed before this returns. An existing
    /// instance keeps its request, backoff and retry streak.
    public func addInstance(template: String, key: String, values: [String: String] = [:]) throws(InstanceError) {
        try runtime.addInstance(template: template, key: key, values: values)
    }

    /// Adds many instances in one transaction and one wake of the loop (a sync of a user list);
    /// returns the refused ones with why.
    @discardableResult
    public func addInstances(_ records: [InstanceRecord]) -> [(record: InstanceRecord, error: InstanceError)] {
        runtime.addInstances(records)
    }

    /// Removes an instance: its request is cancelled, its live activities end; its history stays.
    public func removeInstance(template: String, key: String) throws(InstanceError) {
        try runtime.removeInstance(template: template, key: key)
    }

    /// A template's instances, in the order they were added (nil: no such template).
    public func instances(of template: String) -> [InstanceRecord]? { runtime.instances(of: template) }
}
