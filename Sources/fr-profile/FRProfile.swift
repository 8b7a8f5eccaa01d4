import ArgumentParser

@main
struct FRProfile: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fr-profile",
    abstract: "A Linux device-profiling client for PingAM / ForgeRock journeys.",
    version: "0.1.0",
    subcommands: [Match.self]
  )
}
