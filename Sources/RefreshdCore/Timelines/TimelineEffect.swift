/// What the runtime must do for the timeline machine, in order. `.persist` changes of one event
/// are committed before any other effect of that event is carried out.
package enum TimelineEffect: Sendable, Hashable {
    /// Launch the provider of the widget's kind (`TimelineMachine.definition(ofKind:)?.job`) for
    /// this family, and report its end with `.providerFinished`. One call per family per reload.
    case runProvider(WidgetID, reason: ReloadReason)
    /// Write the entry shown now for that family into the shared container (atomically); nil:
    /// the family left the screen, remove its file.
    case publish(WidgetID, entry: TimelineEntry?)
    case persist(TimelineChange)
    case log(TimelineLog)
}
