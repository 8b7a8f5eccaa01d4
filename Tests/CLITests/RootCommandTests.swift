import Testing

@Suite(.timeLimit(.minutes(10))) struct RootCommandTests {
  @Test func versionFlagPrintsVersion() throws {
    let result = try run(["--version"])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("0."))
  }

  @Test func unknownSubcommandIsAUsageError() throws {
    let result = try run(["no-such-command"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("no-such-command"))
  }
}
