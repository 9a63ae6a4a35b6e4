import RefreshdCore

/// The machine a simulation runs on: when it is on mains power, when its network is down, and
/// how much discretion the system takes with app-refresh launches.
package struct DeviceModel: Sendable, Hashable {
    /// Daily window on mains power, in minutes after local midnight (start, end); it may wrap
    /// past midnight. Default: charging at night, 22:00 to 07:00. Nil: always on mains.
    package var charging: DailyWindow?
    /// Spans with no network.
    package var networkDown: [TimeSpan]
    /// How an app-refresh request's launch relates to its earliest begin date.
    package var discretion: Discretion
    /// The zone the daily windows are in (an IANA name); nil is the simulation's zone.
    package var timeZone: String?
    /// Times of day (minutes after local midnight) the app comes to the foreground: each is an
    /// exempt `reloadAllTimelines` (reason `appForeground`).
    package var foreground: [Int] = []
    /// Spans in Low Power Mode: counted widget reloads are held until each ends.
    package var lowPower: [TimeSpan] = []
    /// Times of day (minutes after local midnight) someone taps an interactive widget button:
    /// each is an exempt reload from a widget intent (reason `widgetIntent`).
    package var intents: [Int] = []
    /// The system reloads every widget this often (reason `system`); nil: never.
    package var systemReloads: Duration?
    /// The app calls `reloadAllTimelines()` this often (reason `explicitAPI`, counted): `12m` is
    /// the ~120 a day of the budget-burning app; nil: never.
    package var explicitReloads: Duration?
    /// Overrides every widget's budget (reloads per family in any 24 h); nil: the job's own.
    package var widgetBudget: Int?
    /// Whether the system announces power and network changes (netlink). False: a container
    /// where uevents do not arrive; only refreshd's once-a-minute re-read finds a change.
    package var conditionNotices = true

    package init(charging: DailyWindow? = DailyWindow(start: 22 * 60, end: 7 * 60), networkDown: [TimeSpan] = [],
                discretion: Discretion = .delayed(maximum: .seconds(15 * 60)), timeZone: String? = nil) {
        self.charging = charging
        self.networkDown = networkDown
        self.discretion = discretion
        self.timeZone = timeZone
    }

    /// iOS launches app refreshes at its own discretion, after the earliest begin date.
    package enum Discretion: Sendable, Hashable {
        /// Exactly at the earliest begin date (as `processing` jobs and `refreshd run` do).
        case exact
        /// After a seeded delay in [0, maximum), drawn per request.
        case delayed(maximum: Duration)
    }

    /// A window of the day in minutes after local midnight; `end < start` wraps past midnight.
    package struct DailyWindow: Sendable, Hashable {
        package var start: Int
        package var end: Int

        package init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }

        /// Whether `minute` (0..<1440) is inside.
        package func contains(_ minute: Int) -> Bool {
            start <= end ? (minute >= start && minute < end) : (minute >= start || minute < end)
        }
    }
}

/// A span of simulated time.
package struct TimeSpan: Sendable, Hashable {
    package var start: SimulationTime
    package var duration: Duration

    package init(start: SimulationTime, duration: Duration) {
        self.start = start
        self.duration = duration
    }
}

/// An instant in a simulation: absolute, or after its start.
package enum SimulationTime: Sendable, Hashable {
    case at(Instant)
    case afterStart(Duration)

    package func instant(start: Instant) -> Instant {
        switch self {
        case let .at(instant): instant
        case let .afterStart(offset): start + offset
        }
    }
}
