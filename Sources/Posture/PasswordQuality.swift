import ProfileJSON
import SystemCalls

/// `passwordQualityEnforced` ← whether changing a password through PAM's `passwd` service must
/// pass a password-quality module: pam_pwquality, pam_cracklib or pam_passwdqc as a
/// `required`, `requisite` or `[…]` line of its password stack (/etc/pam.d/passwd, following
/// `@include`, `include` and `substack`: Debian's common-password, Red Hat's system-auth).
/// `minimumLength` is pam_pwquality's minlen: its module argument, else
/// /etc/security/pwquality.conf (then pwquality.conf.d/*.conf in name order, a later setting
/// winning), else libpwquality's default 8; pam_cracklib's minlen argument, else 9. All
/// world-readable.
///
/// What it does not say: whether existing passwords meet the policy (their hashes in
/// /etc/shadow are root's, and a hash tells no length), nor policies outside PAM (a directory
/// service's own, SSSD's).
package struct PasswordQuality {
  let system: SystemSource

  package init(system: SystemSource) {
    self.system = system
  }

  static let modules = ["pam_pwquality.so", "pam_cracklib.so", "pam_passwdqc.so"]

  /// One `password` line of the stack.
  struct Line {
    var control: String
    var module: String
    var arguments: [String]
    var file: String
  }

  package func fact() -> PostureFact {
    guard system.exists("/etc/pam.d/passwd") else {
      return .unknown("/etc/pam.d/passwd does not exist: passwords are not changed through PAM's passwd service here")
    }
    var problems: [String] = []
    let lines = passwordLines("passwd", depth: 0, problems: &problems)
    if !problems.isEmpty { return .unknown(problems.joined(separator: "; ")) }
    let quality = lines.filter { Self.modules.contains(moduleName($0.module)) }
    guard let line = quality.first(where: { isMandatory($0.control) }) else {
      var reason =
        "the password stack of /etc/pam.d/passwd has no password-quality module (pam_pwquality, pam_cracklib, pam_passwdqc) as required, requisite or [...]"
      if let optional = quality.first {
        reason += "; \(moduleName(optional.module)) is only \(optional.control) in \(optional.file)"
      }
      if let unix = lines.first(where: { moduleName($0.module) == "pam_unix.so" }), unix.arguments.contains("obscure") {
        reason += "; pam_unix's obscure option makes only simple checks (palindromes, case changes, too similar)"
      }
      return .holds(false, reason)
    }
    let module = moduleName(line.module)
    var reason = "\(module) is \(line.control) in the password stack (\(line.file))"
    var details: [(String, JSON)] = [("module", .string(String(module.dropLast(3))))]
    if let (length, source) = minimumLength(line) {
      reason += "; minimum length \(length) (\(source))"
      details.append(("minimumLength", .number(Double(length))))
    }
    return .holds(true, reason, details: details)
  }

  /// The `password` lines of service `name`, includes expanded in place.
  func passwordLines(_ name: String, depth: Int, problems: inout [String]) -> [Line] {
    guard depth < 8 else {
      problems.append("the PAM includes nest deeper than 8 files")
      return []
    }
    guard !name.contains("/"), !name.isEmpty else {
      problems.append("a PAM include names \(name), not a file of /etc/pam.d")
      return []
    }
    let file = "/etc/pam.d/\(name)"
    guard let text = system.readText(file, limit: 1 << 20) else {
      problems.append("\(file) cannot be read")
      return []
    }
    var lines: [Line] = []
    for raw in text.split(separator: "\n") {
      let line = raw.prefix(while: { $0 != "#" })
      let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
      guard let first = words.first else { continue }
      if first == "@include", words.count >= 2 {
        lines += passwordLines(words[1], depth: depth + 1, problems: &problems)
        continue
      }
      guard first == "password" || first == "-password", words.count >= 3 else { continue }
      if words[1] == "include" || words[1] == "substack" {
        lines += passwordLines(words[2], depth: depth + 1, problems: &problems)
        continue
      }
      // A control in brackets may hold spaces: "[success=1 default=ignore]".
      var control = words[1]
      var index = 2
      if control.hasPrefix("[") {
        while !control.hasSuffix("]"), index < words.count {
          control += " " + words[index]
          index += 1
        }
      }
      guard index < words.count else { continue }
      lines.append(Line(control: control, module: words[index], arguments: Array(words[(index + 1)...]), file: file))
    }
    return lines
  }

  private func moduleName(_ module: String) -> String {
    String(module.split(separator: "/").last ?? Substring(module))
  }

  /// required, requisite, or a bracketed control (Debian's pam-auth-update writes
  /// `requisite` for pam_pwquality; a bracketed control decides by its return code).
  private func isMandatory(_ control: String) -> Bool {
    control == "required" || control == "requisite" || control.hasPrefix("[")
  }

  /// The minimum length the module asks, and where it was set.
  private func minimumLength(_ line: Line) -> (Int, String)? {
    let module = moduleName(line.module)
    if let argument = line.arguments.last(where: { $0.hasPrefix("minlen=") }), let value = Int(argument.dropFirst(7)) {
      return (value, "\(module)'s minlen argument in \(line.file)")
    }
    switch module {
    case "pam_cracklib.so":
      return (9, "pam_cracklib's default")
    case "pam_pwquality.so":
      var found: (Int, String)?
      let directory = "/etc/security/pwquality.conf.d"
      let files =
        ["/etc/security/pwquality.conf"]
        + system.listDirectory(directory).filter { $0.hasSuffix(".conf") }.map { "\(directory)/\($0)" }
      for file in files {
        guard let text = system.readText(file, limit: 65536) else { continue }
        for raw in text.split(separator: "\n") {
          let line = raw.prefix(while: { $0 != "#" })
          guard let equals = line.firstIndex(of: "="), line[..<equals].trimmingSpaces == "minlen",
            let value = Int(line[line.index(after: equals)...].trimmingSpaces)
          else { continue }
          found = (value, file)
        }
      }
      return found ?? (8, "libpwquality's default: minlen is not set in /etc/security/pwquality.conf")
    default:
      return nil
    }
  }
}
