import ArgumentParser
import Journey
import JourneyHTTP
import Login
import OAuthTokens
import ProfileCLI
import ProfileJSON
import StateStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The sign-in configuration (`/etc/fr-profile/signin.json`, schemas/signin.schema.json): which
/// AM journey signs in which local users, and how. Only root may change it or any directory
/// above it (a root-owned sticky directory such as /tmp excepted): whoever could would pick the
/// server that decides every sign-in.
struct SigninConfig: Equatable {
  var server: String
  var realm: String
  var tree: String
  var cacert: String?
  /// A tree per PAM service (`sudo` → `StepUp`).
  var serviceTrees: [String: String] = [:]
  var minimumUID: UInt32 = 1000
  /// The users handled; nil: every uid from `minimumUID`.
  var users: [String]?
  var timeoutSeconds: Double = 300
  var tcti: String?
  var clientId: String?
  var scope: String?
  var redirectURI: String?
  var offline: Offline?
  var stateDirectory = SigninConfig.defaultStateDirectory

  struct Offline: Equatable {
    var maximumAge: Double
    var maximumFailures = 5
  }

  static let defaultPath = "/etc/fr-profile/signin.json"
  static let defaultStateDirectory = "/var/lib/fr-profile/signin"
  static let keys: Set<String> = [
    "server", "realm", "tree", "cacert", "services", "minUid", "users", "timeoutSeconds", "tcti", "clientId", "scope", "redirectUri",
    "offline", "stateDirectory", "$schema",
  ]

  /// A configuration that cannot be used, said in one line for syslog.
  struct Problem: Error, CustomStringConvertible {
    var description: String
  }

  /// Reads `path` as only root may have written it: the file root's and not writable by group
  /// or others, every directory above it root's and not writable by others unless sticky.
  static func read(_ path: String) throws(Problem) -> SigninConfig {
    guard path.hasPrefix("/") else { throw Problem(description: "\(path): the configuration needs an absolute path") }
    let slash = path.lastIndex(of: "/")!
    let directoryPath = slash == path.startIndex ? "/" : String(path[..<slash])
    let name = String(path[path.index(after: slash)...])
    let bytes: [UInt8]
    do {
      let directory = try StateDirectory.open(directoryPath, create: false, owner: 0, shared: true)
      guard let file = try directory.read(name, requirement: .ownerWritable(maximumSize: 64 << 10)) else {
        throw Problem(description: "\(path) does not exist")
      }
      bytes = file.bytes
    } catch let problem as Problem {
      throw problem
    } catch {
      throw Problem(description: "refusing the configuration: \(error)")
    }
    do { return try parse(bytes, path: path) } catch let problem as Problem { throw problem } catch {
      throw Problem(description: "\(path): \(error)")
    }
  }

  /// The configuration in `bytes`; every key checked, an unknown one refused.
  static func parse(_ bytes: [UInt8], path: String) throws(Problem) -> SigninConfig {
    func bad(_ why: String) -> Problem { Problem(description: "\(path): \(why)") }
    let document: JSON
    do { document = try JSONParser.parse(bytes) } catch { throw bad("not JSON (\(error))") }
    guard case .object(let object) = document else { throw bad("not a JSON object") }
    if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
      throw bad("unknown key \"\(unknown)\" (schemas/signin.schema.json lists them)")
    }
    func text(_ key: String, required: Bool = false) throws(Problem) -> String? {
      guard let value = object[key] else {
        if required { throw bad("\"\(key)\" is required") }
        return nil
      }
      guard let string = value.stringValue, !string.isEmpty else { throw bad("\"\(key)\" must be a non-empty string") }
      return string
    }
    func number(_ value: JSON?, _ key: String, _ range: ClosedRange<Double>) throws(Problem) -> Double? {
      guard let value else { return nil }
      guard case .number(let number) = value, range.contains(number) else {
        throw bad(
          "\"\(key)\" must be a number from \(JSONWriter.formatNumber(range.lowerBound)) to \(JSONWriter.formatNumber(range.upperBound))")
      }
      return number
    }
    var config = SigninConfig(
      server: try text("server", required: true)!, realm: try text("realm", required: true)!, tree: try text("tree", required: true)!)
    // The command line's rule: https, or plain http to this machine only.
    do { _ = try AMServerURL(config.server, credential: "the password", insecureHTTP: false) } catch {
      throw bad("\"server\": \(error.message)")
    }
    config.cacert = try text("cacert")
    if let cacert = config.cacert, !cacert.hasPrefix("/") { throw bad("\"cacert\" must be an absolute path") }
    if let services = object["services"] {
      guard case .object(let entries) = services else { throw bad("\"services\" must be an object of PAM service names") }
      for service in entries.keys.sorted() {
        let entry = entries[service] ?? .null
        guard let tree = entry["tree"]?.stringValue, !tree.isEmpty, entry.objectValue?.keys.allSatisfy({ $0 == "tree" }) == true else {
          throw bad("\"services\".\"\(service)\" must be {\"tree\": NAME}")
        }
        config.serviceTrees[service] = tree
      }
    }
    if let minimum = try number(object["minUid"], "minUid", 0...4_294_967_294) {
      guard minimum == minimum.rounded() else { throw bad("\"minUid\" must be a whole number") }
      config.minimumUID = UInt32(minimum)
    }
    if let users = object["users"] {
      let names = users.arrayValue?.compactMap(\.stringValue)
      guard let names, names.count == users.arrayValue?.count else { throw bad("\"users\" must be an array of user names") }
      config.users = names
    }
    config.timeoutSeconds = try number(object["timeoutSeconds"], "timeoutSeconds", 10...3600) ?? 300
    config.tcti = try text("tcti")
    config.clientId = try text("clientId")
    config.scope = try text("scope")
    config.redirectURI = try text("redirectUri")
    if let offline = object["offline"] {
      guard case .object(let settings) = offline, settings.keys.allSatisfy({ ["maxAgeSeconds", "maxFailures"].contains($0) }),
        let age = try number(settings["maxAgeSeconds"], "offline.maxAgeSeconds", 1...31_536_000)
      else { throw bad("\"offline\" must be {\"maxAgeSeconds\": N, \"maxFailures\": N}") }
      let failures = try number(settings["maxFailures"], "offline.maxFailures", 1...100) ?? 5
      config.offline = Offline(maximumAge: age, maximumFailures: Int(failures))
    }
    if let directory = try text("stateDirectory") {
      guard directory.hasPrefix("/") else { throw bad("\"stateDirectory\" must be an absolute path") }
      config.stateDirectory = directory
    }
    return config
  }

  /// Each request's time at a sign-in: a third of the whole at most (30 s at most), so a server
  /// that does not answer one is "unreachable" (the offline path) with time left for it.
  var requestTimeout: Double { min(30, timeoutSeconds / 3) }

  /// The configuration's AM as a transport (its cacert trusted alone when it names one).
  func transport(timeout: Double) -> OAuthTransport { Login.transport(HTTPClient(timeout: timeout, caFile: cacert)) }

  /// A login walking `tree` on the configuration's AM, within `maximumTime`, each request within
  /// `requestTimeout`. Its cacert must be readable.
  func login(tree: String, maximumTime: Double, requestTimeout: Double, userAgent: String) throws(Problem) -> Login {
    if let cacert, access(cacert, R_OK) != 0 {
      throw Problem(description: "cannot read the configuration's cacert \(cacert): \(String(cString: strerror(errno)))")
    }
    var login = Login(
      endpoint: AuthenticateEndpoint(server: server, realm: realm, tree: tree), transport: transport(timeout: requestTimeout))
    login.requestTimeout = requestTimeout
    login.maximumTime = maximumTime
    login.userAgent = userAgent
    return login
  }

  /// The tree for a PAM service: its own, else the default.
  func tree(service: String) -> String { serviceTrees[service] ?? tree }

  /// Whether the module signs in `user` (uid `uid`): never root; the `users` list when given,
  /// else every uid from `minUid`.
  func handles(user: String, uid: UInt32) -> Bool {
    guard uid != 0 else { return false }
    if let users { return users.contains(user) }
    return uid >= minimumUID
  }
}
