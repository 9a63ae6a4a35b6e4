import ArgumentParser
import RefreshdCLI

/// The `refreshd` command line: a BGTaskScheduler-style scheduler for jobs in YAML files.
@main
struct RefreshdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refreshd",
        abstract: "Background-refresh scheduler: iOS BGTaskScheduler semantics for jobs in Jobs/*.yaml.",
        subcommands: [RunCommand.self, CheckCommand.self, StatusCommand.self, CalendarCommand.self,
                      SimulateCommand.self, TestCommand.self, CtlCommand.self, WhyCommand.self,
                      WatchCommand.self, StagingCommand.self, StatsCommand.self, ActionWorkerCommand.self])
}
