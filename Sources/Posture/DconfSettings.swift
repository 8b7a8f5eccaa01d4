import SystemCalls

/// GSettings keys as a GNOME session with the dconf backend sees them, read from files: the
/// dconf profile /etc/dconf/profile/user, the user's database, the system databases with their
/// locks, and the schema's default (ScreenLock says the order). The databases are read once, when
/// the settings are made; the user's through `HomeFiles`, which trusts nothing the user planted.
struct DconfSettings {
  let system: SystemSource
  /// The system databases of the profile, in order, with their paths.
  let systemDatabases: [(String, GVDBFile)]
  /// Why a system database could not be used; every lookup is then unknown.
  let systemProblems: [String]
  /// The user's database and its path; nil when there is none.
  let userDatabase: (String, GVDBFile)?
  /// Why the user's database is not used: not trustworthy, unreadable or malformed. Every key
  /// a system database does not lock is then unknown.
  let userProblem: String?

  /// A key's value and where it came from, in words.
  struct Lookup {
    var value: GVariantValue?
    var description: String
  }

  init(system: SystemSource, home: HomeFiles) {
    self.system = system
    let (userName, systemNames) = Self.profile(system)
    var databases: [(String, GVDBFile)] = []
    var problems: [String] = []
    for database in systemNames where !database.contains("/") {
      let file = "/etc/dconf/db/\(database)"
      guard let bytes = system.readBytes(file, limit: GVDBFile.maximumSize + 1) else { continue }
      guard bytes.count <= GVDBFile.maximumSize else {
        problems.append("\(file) is larger than \(GVDBFile.maximumSizeText)")
        continue
      }
      do throws(GVDBFile.Failure) {
        databases.append((file, try GVDBFile(bytes)))
      } catch {
        problems.append("\(file) is \(error)")
      }
    }
    systemDatabases = databases
    systemProblems = problems
    var user: (String, GVDBFile)?
    var userProblem: String?
    if let userName, !userName.contains("/") {
      let relative = [".config", "dconf", userName]
      let file = home.path(relative)
      switch home.read(relative, limit: GVDBFile.maximumSize, limitText: GVDBFile.maximumSizeText) {
      case .missing: break
      case .untrusted(let why): userProblem = why
      case .bytes(let bytes):
        do throws(GVDBFile.Failure) {
          user = (file, try GVDBFile(bytes))
        } catch {
          userProblem = "\(file) is \(error)"
        }
      }
    }
    userDatabase = user
    self.userProblem = userProblem
  }

  /// The databases the profile names: the user's first ("user"), then system ones, in order.
  static func profile(_ system: SystemSource) -> (user: String?, system: [String]) {
    guard let text = system.readText("/etc/dconf/profile/user", limit: 65536) else { return ("user", []) }
    var user: String?
    var systems: [String] = []
    for raw in text.split(separator: "\n") {
      let line = raw.trimmingSpaces
      if line.hasPrefix("user-db:") { user = user ?? String(line.dropFirst(8)) }
      if line.hasPrefix("system-db:") { systems.append(String(line.dropFirst(10))) }
    }
    return (user, systems)
  }

  func lookup(schema: String, key: String) -> Lookup {
    let name = "\(schema) \(key)"
    let path = "/" + schema.split(separator: ".").joined(separator: "/") + "/" + key
    if !systemProblems.isEmpty { return Lookup(value: nil, description: "\(name) unknown: \(systemProblems.joined(separator: ", "))") }
    // A lock in a system database: that database's value (or the default) and nothing above it.
    if let locking = systemDatabases.firstIndex(where: { $0.1.isLocked(path) }) {
      for (file, database) in systemDatabases[locking...] {
        if let value = database.value(path) { return Lookup(value: value, description: "\(name) = \(show(value)) (locked in \(file))") }
      }
      return schemaDefault(schema: schema, key: key, note: " (locked in \(systemDatabases[locking].0))")
    }
    if let userProblem { return Lookup(value: nil, description: "\(name) unknown: \(userProblem)") }
    if let (file, database) = userDatabase, let value = database.value(path) {
      return Lookup(value: value, description: "\(name) = \(show(value)) (\(file))")
    }
    for (file, database) in systemDatabases {
      if let value = database.value(path) { return Lookup(value: value, description: "\(name) = \(show(value)) (\(file))") }
    }
    return schemaDefault(schema: schema, key: key, note: "")
  }

  /// The schema's default: its .gschema.xml, then the override files in name order.
  func schemaDefault(schema: String, key: String, note: String) -> Lookup {
    let name = "\(schema) \(key)"
    let directory = ScreenLock.schemaDirectory
    let file = "\(directory)/\(schema).gschema.xml"
    guard let xml = system.readText(file) else {
      return Lookup(value: nil, description: "\(name) unknown: not set, and the schema \(file) is not installed\(note)")
    }
    guard let (type, text) = xmlDefault(xml, schema: schema, key: key) else {
      return Lookup(value: nil, description: "\(name) unknown: \(file) has no default for it\(note)")
    }
    var value = parseGVariantText(text, type: type)
    var source = "the default in \(file)"
    for override in system.listDirectory(directory) where override.hasSuffix(".gschema.override") {
      guard let keyFile = system.readText("\(directory)/\(override)", limit: 1 << 20),
        let text = iniSection(keyFile, schema)[key]
      else { continue }
      value = parseGVariantText(text, type: type)
      source = "the default overridden in \(directory)/\(override)"
    }
    guard let value else { return Lookup(value: nil, description: "\(name) unknown: \(source) is not a value of type \(type)\(note)") }
    return Lookup(value: value, description: "\(name) = \(show(value)) (\(source)\(note))")
  }

  private func show(_ value: GVariantValue) -> String {
    switch value {
    case .boolean(let flag): String(flag)
    case .uint32(let number): String(number)
    case .int32(let number): String(number)
    case .other(let type): "a value of type \(type)"
    }
  }
}

/// The type and default text of `<key name="KEY" type="T"><default>…</default>` in the
/// `<schema id="SCHEMA">` element of a .gschema.xml file.
package func xmlDefault(_ xml: String, schema: String, key: String) -> (type: String, text: String)? {
  guard let schemaStart = xml.firstRange(of: "id=\"\(schema)\"") else { return nil }
  let rest = xml[schemaStart.upperBound...]
  let schemaEnd = rest.firstRange(of: "</schema>")?.lowerBound ?? rest.endIndex
  let body = rest[..<schemaEnd]
  guard let keyStart = body.firstRange(of: "<key name=\"\(key)\"") else { return nil }
  let element = body[keyStart.lowerBound...]
  guard let close = element.firstRange(of: "</key>") else { return nil }
  let keyElement = element[..<close.lowerBound]
  guard let typeStart = keyElement.firstRange(of: "type=\"") else { return nil }
  let type = keyElement[typeStart.upperBound...].prefix(while: { $0 != "\"" })
  guard let open = keyElement.firstRange(of: "<default>"), let end = keyElement.firstRange(of: "</default>"),
    open.upperBound <= end.lowerBound
  else { return nil }
  return (String(type), String(keyElement[open.upperBound..<end.lowerBound].trimmingSpaces))
}

/// GVariant text for the types the screen-lock keys use: "true", "false", "300", "uint32 300".
package func parseGVariantText(_ text: String, type: String) -> GVariantValue? {
  let words = text.split(separator: " ")
  switch type {
  case "b":
    guard words.count == 1 else { return nil }
    return words[0] == "true" ? .boolean(true) : words[0] == "false" ? .boolean(false) : nil
  case "u":
    let digits = words.count == 2 && words[0] == "uint32" ? words[1] : words.count == 1 ? words[0] : nil
    return digits.flatMap { UInt32($0) }.map(GVariantValue.uint32)
  case "i":
    let digits = words.count == 2 && words[0] == "int32" ? words[1] : words.count == 1 ? words[0] : nil
    return digits.flatMap { Int32($0) }.map(GVariantValue.int32)
  default:
    return nil
  }
}
