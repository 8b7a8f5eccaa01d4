import ProfileCLI

/// The start-up fast path for `fr-profile collect`, which runs at every login.
///
/// ArgumentParser builds its command tree by reflection and dynamic casts; in the release binary
/// (static Swift runtime) that cost ~13 M instructions when it was measured (about 3 ms here,
/// half of a whole collect; see bench/README.md). This parser accepts only the plain spellings of `collect`'s options and
/// hands anything else — help, unknown or malformed options, invalid combinations — to
/// ArgumentParser, which then parses and reports exactly as it always does. A test checks that
/// both parsers produce the same `CollectRequest` for every invocation the fast path accepts.
package enum FastCollect {
  /// The request for `arguments` (without the program name), or nil to use ArgumentParser.
  package static func parse(_ arguments: [String]) -> CollectRequest? {
    guard arguments.first == "collect" else { return nil }
    var request = CollectRequest()
    var index = 1
    while index < arguments.count {
      var argument = arguments[index]
      var inlineValue: String?
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        inlineValue = String(argument[argument.index(after: equals)...])
        argument = String(argument[..<equals])
      }
      func value(unconditional: Bool = false) -> String? {
        if let inlineValue { return inlineValue.isEmpty ? nil : inlineValue }
        index += 1
        // "-" (stdout) is a value; so is anything after an unconditional option (--latitude -33.9).
        guard index < arguments.count, unconditional || arguments[index] == "-" || !arguments[index].hasPrefix("-")
        else { return nil }
        return arguments[index]
      }
      func flag(_ set: inout Bool) -> Bool {
        guard inlineValue == nil, !set else { return false }  // a repeated flag: let ArgumentParser judge
        set = true
        return true
      }
      func option(_ slot: inout String?) -> Bool {
        guard slot == nil, let text = value() else { return false }
        slot = text
        return true
      }
      func number(_ slot: inout Double?) -> Bool {
        guard slot == nil, let text = value(unconditional: true), let number = Double(text) else { return false }
        slot = number
        return true
      }
      let accepted: Bool
      switch argument {
      case "--no-metadata": accepted = flag(&request.noMetadata)
      case "--location": accepted = flag(&request.location)
      case "--pretty": accepted = flag(&request.pretty)
      case "--compact": accepted = flag(&request.compact)
      case "-v", "--verbose": accepted = flag(&request.settings.verbose)
      case "-o", "--output": accepted = option(&request.output)
      case "--state-dir": accepted = option(&request.settings.stateDirectory)
      case "--location-file": accepted = option(&request.settings.locationFile)
      case "--user-agent": accepted = option(&request.settings.userAgent)
      case "--latitude": accepted = number(&request.settings.latitude)
      case "--longitude": accepted = number(&request.settings.longitude)
      case "--root":
        var root: String?
        accepted = request.settings.root == "/" && option(&root)
        if let root { request.settings.root = root }
      default: accepted = false
      }
      guard accepted else { return nil }
      index += 1
    }
    return request.problem == nil ? request : nil
  }
}
