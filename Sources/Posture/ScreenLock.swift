import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `screenLockOnIdle` ← whether the desktop session of the user running fr-profile locks its
/// screen by itself when idle, from the desktop's own settings files (no D-Bus, no root).
///
/// The session: a graphical session of the user's uid in /run/systemd/sessions/* (logind's
/// world-readable state: `UID=`, `TYPE=x11|wayland`, `DESKTOP=`), else `XDG_CURRENT_DESKTOP`
/// when fr-profile runs inside one. The home directory comes from /etc/passwd (for the caller's
/// own uid, else `HOME`). `DCONF_PROFILE` and `XDG_CONFIG_HOME` of the session are not seen: the
/// default profile and ~/.config are read. The user's files are read through `HomeFiles`: a link,
/// a FIFO, a file of someone else's or one too large there makes the fact unknown, saying which.
///
/// GNOME: the keys org.gnome.desktop.screensaver `lock-enabled` and `idle-activation-enabled`
/// and org.gnome.desktop.session `idle-delay` (seconds, 0 = never idle), plus `lock-delay`,
/// resolved as dconf resolves them — a key locked by a system database (/etc/dconf/db/NAME, its
/// ".locks") takes that database's value, else the user's database (~/.config/dconf/user), else
/// the system databases of /etc/dconf/profile/user, else the schema's default (the
/// .gschema.xml, then *.gschema.override files in name order, a later one winning).
/// KDE Plasma: [Daemon] `Autolock` (default true) and `Timeout` (minutes, default 5) in
/// ~/.config/kscreenlockerrc, else /etc/xdg/kscreenlockerrc.
///
/// It says what the settings ask for; it cannot see an application inhibiting idleness (a video
/// player), nor a session that is not GNOME or KDE (unknown, said).
package struct ScreenLock {
  let system: SystemSource
  let uid: UInt32

  package init(system: SystemSource, uid: UInt32) {
    self.system = system
    self.uid = uid
  }

  static let schemaDirectory = "/usr/share/glib-2.0/schemas"

  package func fact() -> PostureFact {
    guard let desktop = desktop() else {
      return .unknown(
        "uid \(uid) has no graphical session (no x11 or wayland session in /run/systemd/sessions, and XDG_CURRENT_DESKTOP is unset): there is no desktop whose screen could lock"
      )
    }
    guard let home = home() else {
      return .unknown("\(desktop.description): uid \(uid) has no home directory in /etc/passwd, so its settings cannot be found")
    }
    // logind's DESKTOP is the session's XDG_SESSION_DESKTOP: "gnome" (Fedora), "ubuntu" (Ubuntu's
    // GNOME session), "KDE"; XDG_CURRENT_DESKTOP lists names: "ubuntu:GNOME".
    let names = desktop.name.lowercased().split(separator: ":")
    if names.contains(where: { $0.hasPrefix("gnome") || $0 == "ubuntu" || $0 == "unity" }) {
      return gnome(home: home, session: desktop.description)
    }
    if names.contains(where: { $0 == "kde" || $0.hasPrefix("plasma") }) { return kde(home: home, session: desktop.description) }
    return .unknown("\(desktop.description): fr-profile reads only GNOME's and KDE Plasma's screen-lock settings")
  }

  /// The desktop of the user's graphical session, and where that was read.
  func desktop() -> (name: String, description: String)? {
    for id in system.listDirectory("/run/systemd/sessions") where !id.hasSuffix(".ref") {
      guard let bytes = system.readBytes("/run/systemd/sessions/\(id)", limit: 65536) else { continue }
      let session = parseKeyValueFile(bytes)
      guard session["UID"] == String(uid), let type = session["TYPE"], type == "x11" || type == "wayland" else { continue }
      let desktop = session["DESKTOP"] ?? ""
      guard !desktop.isEmpty else { continue }
      return (desktop, "session \(id) of uid \(uid) is a \(type) \(desktop) session (/run/systemd/sessions/\(id))")
    }
    if let desktop = system.variable("XDG_CURRENT_DESKTOP"), !desktop.isEmpty {
      return (desktop, "XDG_CURRENT_DESKTOP is \(desktop)")
    }
    return nil
  }

  /// The user's home directory from /etc/passwd; for the caller's own uid, else `HOME` (a user
  /// of a directory service, whom /etc/passwd does not list).
  func home() -> String? {
    for line in (system.readText("/etc/passwd") ?? "").split(separator: "\n") {
      let fields = line.split(separator: ":", omittingEmptySubsequences: false)
      if fields.count >= 7, UInt32(fields[2]) == uid, fields[5].hasPrefix("/") { return String(fields[5]) }
    }
    if uid == getuid(), let home = system.variable("HOME"), home.hasPrefix("/") { return home }
    return nil
  }

  // MARK: GNOME

  func gnome(home: String, session: String) -> PostureFact {
    let settings = DconfSettings(system: system, home: HomeFiles(system: system, home: home, uid: uid))
    let lock = settings.lookup(schema: "org.gnome.desktop.screensaver", key: "lock-enabled")
    let activation = settings.lookup(schema: "org.gnome.desktop.screensaver", key: "idle-activation-enabled")
    let idle = settings.lookup(schema: "org.gnome.desktop.session", key: "idle-delay")
    let lockDelay = settings.lookup(schema: "org.gnome.desktop.screensaver", key: "lock-delay")
    let read = [lock, activation, idle, lockDelay].map(\.description).joined(separator: "; ")
    guard case .boolean(let lockEnabled)? = lock.value, case .boolean(let activates)? = activation.value,
      case .uint32(let idleDelay)? = idle.value
    else {
      return .unknown("\(session); \(read)")
    }
    let reason = "\(session); \(read)"
    guard lockEnabled, activates, idleDelay > 0 else { return .holds(false, reason) }
    var after = Int(idleDelay)
    if case .uint32(let delay)? = lockDelay.value { after += Int(delay) }
    return .holds(true, reason, details: [("lockAfterSeconds", .number(Double(after)))])
  }

  // MARK: KDE Plasma

  func kde(home: String, session: String) -> PostureFact {
    var autolock: (String, String)?
    var timeout: (String, String)?
    var files: [(path: String, text: String)] = []
    let home = HomeFiles(system: system, home: home, uid: uid)
    switch home.read([".config", "kscreenlockerrc"], limit: 65536, limitText: "64 KiB") {
    case .missing: break
    case .untrusted(let why): return .unknown("\(session); \(why)")
    case .bytes(let bytes): files.append((home.path([".config", "kscreenlockerrc"]), String(decoding: bytes, as: UTF8.self)))
    }
    if let text = system.readText("/etc/xdg/kscreenlockerrc", limit: 65536) { files.append(("/etc/xdg/kscreenlockerrc", text)) }
    for (path, text) in files {
      let daemon = iniSection(text, "Daemon")
      if autolock == nil, let value = daemon["Autolock"] { autolock = (value, path) }
      if timeout == nil, let value = daemon["Timeout"] { timeout = (value, path) }
    }
    let autolockText = autolock.map { "Autolock=\($0.0) (\($0.1))" } ?? "Autolock not set (KDE's default: true)"
    let timeoutText = timeout.map { "Timeout=\($0.0) minutes (\($0.1))" } ?? "Timeout not set (KDE's default: 5 minutes)"
    let reason = "\(session); \(autolockText); \(timeoutText)"
    let locks: Bool
    switch autolock?.0.lowercased() ?? "true" {
    case "true": locks = true
    case "false": locks = false
    default: return .unknown(reason + ": Autolock is neither true nor false")
    }
    guard let minutes = Int(timeout?.0 ?? "5"), minutes >= 0 else { return .unknown(reason + ": Timeout is not a number of minutes") }
    guard locks, minutes > 0 else { return .holds(false, reason) }
    return .holds(true, reason, details: [("lockAfterSeconds", .number(Double(minutes * 60)))])
  }
}

/// The `key=value` lines of `[section]` in an INI-style file (KDE's config, GLib key files).
func iniSection(_ text: String, _ section: String) -> [String: String] {
  var inside = false
  var values: [String: String] = [:]
  for raw in text.split(separator: "\n") {
    let line = raw.trimmingSpaces
    if line.hasPrefix("[") {
      // KDE marks immutable groups "[Daemon][$i]"; the group name is the first bracket.
      inside = line.dropFirst().prefix(while: { $0 != "]" }) == section
      continue
    }
    guard inside, !line.hasPrefix("#"), !line.hasPrefix(";"), let equals = line.firstIndex(of: "=") else { continue }
    var key = line[..<equals].trimmingSpaces
    if let flag = key.firstIndex(of: "[") { key = key[..<flag].trimmingSpaces }
    values[String(key)] = String(line[line.index(after: equals)...].trimmingSpaces)
  }
  return values
}

extension StringProtocol {
  /// Without spaces and tabs at either end.
  var trimmingSpaces: SubSequence {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }) else { return self[endIndex...] }
    let last = lastIndex(where: { !isSpace($0) })!
    return self[first...last]
  }
}
