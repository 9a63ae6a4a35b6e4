/// A broken rule of `TimelineMachine`'s state, found by `checkInvariants()`. A correct machine
/// never produces one; the simulator and the tests check after every step.
package struct TimelineViolation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The rule that is broken. Raw values are stable ids.
    package enum Invariant: String, Sendable, Hashable, Codable, CaseIterable {
        /// More counted reloads in some window than the budget allowed.
        case budgetExceeded = "budget-exceeded"
        /// The ledger is out of order, or kept for an unlimited budget.
        case ledgerInvalid = "ledger-invalid"
        /// The shown entry is not the timeline's entry at its index, or is dated after it was
        /// shown: it is not one a provider returned for that place.
        case publishedNotReturned = "published-not-returned"
        /// An entry whose date has come is not shown (a switch was missed).
        case entryNotPublished = "entry-not-published"
        /// A deferred reload's release is not the instant the window frees a slot, or a reload is
        /// deferred although a slot is free, or an exempt or unlimited reload is deferred.
        case releaseWrong = "release-wrong"
        /// A release or policy reload whose instant has come is still waiting.
        case dueNotActed = "due-not-acted"
        /// `nextDeadline` is not the earliest instant anything is due.
        case deadlineMismatch = "deadline-mismatch"
        /// The stale span and the stale bookkeeping disagree, or spans are out of order.
        case staleSpanInvalid = "stale-span-invalid"
        /// `order` and the widgets disagree, or a widget's kind is not declared.
        case widgetIndexMismatch = "widget-index-mismatch"
    }

    package var invariant: Invariant
    package var widget: WidgetID?
    /// One line saying what is wrong, with the values involved.
    package var detail: String

    package init(_ invariant: Invariant, _ widget: WidgetID? = nil, _ detail: String) {
        self.invariant = invariant
        self.widget = widget
        self.detail = detail
    }

    /// `budget-exceeded [photos/systemSmall]: 51 counted reloads in 24 h from ...`.
    package var description: String {
        "\(invariant.rawValue)\(widget.map { " [\($0)]" } ?? ""): \(detail)"
    }
}
