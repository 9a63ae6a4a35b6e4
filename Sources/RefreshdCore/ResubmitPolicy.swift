/// How a job's next request is made when a run launches ("re-schedule first").
///
/// The next request is submitted at launch, before the work starts, so a crash or an expiry never
/// leaves the job without a future.
public enum ResubmitPolicy: Sendable, Hashable {
    /// One request at a time, made by whoever submits (config seeding or the embedding app).
    case none
    /// The next request's earliest begin date is the launch instant plus this interval.
    case after(Duration)
    /// The next request's earliest begin date is the schedule's next slot after the launch (or,
    /// with `missed: all`, after the slot just run, so missed slots are replayed).
    case calendar(Schedule)
}
