import Foundation
import TestSupport
import Testing

/// Checks `text` — a document the built fr-profile printed or wrote — against
/// schemas/`schema`.schema.json with Debian's python3-jsonschema (scripts/check-schemas.py), an
/// implementation the project did not write. `lines`: one document per line.
func expectValid(
  _ text: String, schema: String, lines: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
) {
  let script = AMScript.packageRoot + "/scripts/check-schemas.py"
  do {
    let result = try TestProcess.run(
      ["/usr/bin/python3", script, schema, "-"] + (lines ? ["--lines"] : []), environment: [:], stdin: Array(text.utf8),
      timeout: 60)
    #expect(result.status == 0, "not a valid \(schema) document: \(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
  } catch {
    Issue.record("cannot run scripts/check-schemas.py: \(error)", sourceLocation: sourceLocation)
  }
}
