import ArgumentParser
import Collectors
import DeviceFacts
import ProfileCLI
import ProfileJSON

extension FRProfile {
  struct Tamper: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Explain the tamper score (jailBreakScore): each detector's score and evidence.",
      discussion: """
        The score is the maximum over the detectors, each 0…1, as the SDKs compute it.

        EXAMPLES:
          fr-profile tamper
          fr-profile tamper --json --pretty
          fr-profile tamper --root Tests/CollectorsTests/Fixtures/machines/cloud-vm \\
              -o tamper.txt
        """
    )

    @Option(
      name: .customLong("root"), help: ArgumentHelp("Examine a recorded machine tree instead of /.", valueName: "DIR"),
      completion: .directory)
    var root: String = "/"

    @Flag(help: "Print one JSON object: {\"score\", \"detectors\": [{\"name\", \"score\", \"evidence\"}]}.")
    var json = false

    @OptionGroup(title: "Output Options") var format: OutputOptions

    func validate() throws {
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
    }

    func run() throws {
      try reportingFailures {
        let settings = ProfileSettings(root: root)
        let context = CollectionContext(system: try settings.systemSource())
        let report = TamperScore.evaluate(TamperScore.defaultDetectors, context)
        if json {
          try format.emit(report.json)
          return
        }
        var text = "jailBreakScore \(JSONWriter.formatNumber(report.score))\n"
        let width = report.results.map(\.name.count).max() ?? 0
        for result in report.results {
          let score = JSONWriter.formatNumber(result.finding.score)
          let name = result.name + String(repeating: " ", count: width - result.name.count)
          let evidence = result.finding.evidence.isEmpty ? "no sign" : result.finding.evidence.joined(separator: "; ")
          text += "  \(score)\(String(repeating: " ", count: max(1, 5 - score.count)))\(name)  \(evidence)\n"
        }
        try format.emit(text: text)
      }
    }
  }
}
