import FRProfileCommands
import Testing

/// The `collect` fast path must agree with ArgumentParser on everything it accepts, and leave
/// everything else (errors, help, odd spellings) to ArgumentParser.
@Suite(.timeLimit(.minutes(10))) struct FastCollectTests {
  static let accepted: [[String]] = [
    ["collect"],
    ["collect", "--pretty"],
    ["collect", "--compact", "--no-metadata"],
    ["collect", "--location", "--latitude", "52.52", "--longitude", "13.405"],
    ["collect", "--location", "--latitude=1e1", "--longitude=2"],
    ["collect", "--state-dir", "/tmp/x", "--root", "/srv/tree", "-v"],
    ["collect", "--verbose", "-o", "/tmp/p.json", "--user-agent", "Kiosk/1.0 (x)"],
    ["collect", "--output=/tmp/p.json", "--location", "--location-file", "/etc/loc"],
    ["collect", "--location", "--latitude", "-33.9", "--longitude", "-70.6"],
    ["collect", "-o", "-", "--pretty"],
  ]

  static let leftToArgumentParser: [[String]] = [
    ["collect", "--help"], ["collect", "-h"], ["collect", "--pretty", "--compact"], ["collect", "--latitude", "1"],
    ["collect", "--latitude", "1", "--longitude", "2"], ["collect", "--bogus"], ["collect", "--pretty", "--pretty"],
    ["collect", "--state-dir"],
    ["collect", "extra"], ["identifier"], [], ["collect", "--no-metadata=yes"], ["collect", "--latitude", "abc"],
    ["collect", "--root", ""], ["collect", "--state-dir", "a", "--state-dir", "b"], ["collect", "--user-agent="],
    ["collect", "--location", "--latitude", "--longitude", "1"], ["collect", "-o", "-x"],
  ]

  @Test("fast path equals ArgumentParser", arguments: accepted)
  func agreesWithArgumentParser(arguments: [String]) throws {
    let fast = try #require(FastCollect.parse(arguments))
    let parsed = try FRProfile.parseAsRoot(arguments)
    let collect = try #require(parsed as? FRProfile.Collect)
    #expect(fast == collect.request)
  }

  @Test("everything else goes to ArgumentParser", arguments: leftToArgumentParser)
  func declines(arguments: [String]) {
    #expect(FastCollect.parse(arguments) == nil)
  }
}
