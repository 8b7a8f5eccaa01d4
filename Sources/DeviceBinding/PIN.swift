import Crypto
import CryptoExtras
import ProfileJSON

/// What PINs are accepted at binding time, in the parameter syntax of HID's protection
/// policy: `MINLEN=6;MAXLEN=10;NUM=6;MNUM=10;UP=0;MUP=0;LOW=0;MLOW=0;ALPHA=0;MALPHA=0;NALPHA=0;MNALPHA=0`
/// (minimum and `M`aximum counts of digits, upper case, lower case, letters and
/// non-alphanumerics), plus `SEQ=n` (at most n characters in an ascending or descending run,
/// such as 1234 or dcba) and `REP=n` (at most n equal characters in a row). A maximum of 0
/// for a class is read as "no limit" unless its minimum is also 0 and the parameter was
/// written as `M…=0` explicitly, which forbids the class.
package struct PINPolicy: Sendable, Equatable, CustomStringConvertible {
  package var minimumLength = 4
  package var maximumLength = 64
  /// (minimum, maximum) per class; maximum nil = unlimited.
  package var digits: (Int, Int?) = (0, nil)
  package var upper: (Int, Int?) = (0, nil)
  package var lower: (Int, Int?) = (0, nil)
  package var letters: (Int, Int?) = (0, nil)
  package var others: (Int, Int?) = (0, nil)
  package var maximumSequence: Int?
  package var maximumRepeat: Int?
  package private(set) var description: String

  /// fr-profile's default: 6 to 64 characters, no run of more than 3 (123, abc) and no
  /// character more than twice in a row.
  package static let `default` = try! PINPolicy(parsing: "MINLEN=6;MAXLEN=64;SEQ=3;REP=2")

  package static func == (lhs: Self, rhs: Self) -> Bool { lhs.description == rhs.description }

  package init(parsing text: String) throws(PINPolicyError) {
    description = text
    let classes = ["NUM", "UP", "LOW", "ALPHA", "NALPHA"]
    for part in text.split(separator: ";", omittingEmptySubsequences: true) {
      let pieces = part.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
      guard pieces.count == 2, !pieces[0].isEmpty else { throw .syntax("\"\(part)\" is not NAME=NUMBER") }
      let name = pieces[0].uppercased()
      guard let value = Int(pieces[1]), value >= 0, value <= 1024 else {
        throw .syntax("\(name) needs a whole number from 0 to 1024, not \"\(pieces[1])\"")
      }
      switch name {
      case "MINLEN": minimumLength = value
      case "MAXLEN": maximumLength = value
      case "SEQ": maximumSequence = value
      case "REP": maximumRepeat = value
      default:
        let isMaximum = name.hasPrefix("M") && classes.contains(String(name.dropFirst()))
        let base = isMaximum ? String(name.dropFirst()) : name
        guard classes.contains(base) else { throw .syntax("unknown parameter \(name)") }
        func set(_ pair: inout (Int, Int?)) {
          if isMaximum { pair.1 = value } else { pair.0 = value }
        }
        switch base {
        case "NUM": set(&digits)
        case "UP": set(&upper)
        case "LOW": set(&lower)
        case "ALPHA": set(&letters)
        default: set(&others)
        }
      }
    }
    guard minimumLength >= 1 else { throw .syntax("MINLEN must be at least 1") }
    guard maximumLength >= minimumLength else { throw .syntax("MAXLEN is below MINLEN") }
    for (name, pair) in [("NUM", digits), ("UP", upper), ("LOW", lower), ("ALPHA", letters), ("NALPHA", others)] {
      if let maximum = pair.1, maximum < pair.0 { throw .syntax("M\(name) is below \(name)") }
    }
  }

  /// The first rule `pin` breaks, in words; nil when it is acceptable. Never echoes the PIN.
  package func violation(_ pin: String) -> String? {
    let characters = Array(pin.unicodeScalars)
    if characters.count < minimumLength { return "a PIN needs at least \(minimumLength) characters" }
    if characters.count > maximumLength { return "a PIN may have at most \(maximumLength) characters" }
    func count(_ test: (Unicode.Scalar) -> Bool) -> Int { characters.filter(test).count }
    let isDigit: (Unicode.Scalar) -> Bool = { $0.properties.numericType != nil && $0.isASCII }
    let isUpper: (Unicode.Scalar) -> Bool = { $0.properties.isUppercase }
    let isLower: (Unicode.Scalar) -> Bool = { $0.properties.isLowercase }
    let isLetter: (Unicode.Scalar) -> Bool = { $0.properties.isAlphabetic }
    let checks: [(String, (Int, Int?), Int)] = [
      ("digits", digits, count(isDigit)), ("upper-case letters", upper, count(isUpper)),
      ("lower-case letters", lower, count(isLower)), ("letters", letters, count(isLetter)),
      ("characters other than letters and digits", others, count { !isLetter($0) && !isDigit($0) }),
    ]
    for (label, limits, found) in checks {
      if found < limits.0 { return "a PIN needs at least \(limits.0) \(label)" }
      if let maximum = limits.1, found > maximum {
        return maximum == 0 ? "a PIN may not contain \(label)" : "a PIN may contain at most \(maximum) \(label)"
      }
    }
    if let maximumRepeat, characters.count > maximumRepeat {
      var run = 1
      for index in characters.indices.dropFirst() {
        run = characters[index] == characters[index - 1] ? run + 1 : 1
        if run > maximumRepeat { return "a PIN may not repeat a character more than \(maximumRepeat) times in a row" }
      }
    }
    if let maximumSequence, characters.count > maximumSequence {
      for step in [1, -1] {
        var run = 1
        for index in characters.indices.dropFirst() {
          run = Int(characters[index].value) - Int(characters[index - 1].value) == step ? run + 1 : 1
          if run > maximumSequence {
            return "a PIN may not have a run of more than \(maximumSequence) consecutive characters (like 1234 or abcd)"
          }
        }
      }
    }
    return nil
  }
}

package enum PINPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
  case syntax(String)
  package var description: String {
    switch self {
    case .syntax(let text): "PIN policy: \(text)"
    }
  }
}

/// What wrong PINs cost.
package enum LockPolicy: Sendable, Equatable, CustomStringConvertible {
  /// Unlimited attempts (each still costs one scrypt derivation).
  case none
  /// After `attempts` wrong PINs in a row the key refuses to sign until it is bound again.
  case lock(attempts: Int)
  /// After each wrong PIN the next attempt must wait 2^(failures-1) seconds (capped at one
  /// hour); the wait survives restarts.
  case delay
  /// A wrong PIN is not detected locally: the key is unsealed without authentication, a wrong
  /// PIN yields a different key, and AM rejects its signature (INVALID_SIGNATURE), where its
  /// failures are audited. No public key is stored, so the file alone cannot test a PIN.
  case silent

  /// `none`, `lock` (5 attempts), `lock:N`, `delay`, `silent`.
  package init(parsing text: String) throws(PINPolicyError) {
    let lowered = text.lowercased()
    switch lowered {
    case "none": self = .none
    case "lock": self = .lock(attempts: 5)
    case "delay": self = .delay
    case "silent": self = .silent
    default:
      if lowered.hasPrefix("lock:"), let count = Int(lowered.dropFirst(5)), count >= 1, count <= 100 {
        self = .lock(attempts: count)
      } else {
        throw .syntax("lock policy \"\(text)\" is not none, lock, lock:N (1…100), delay or silent")
      }
    }
  }

  package var description: String {
    switch self {
    case .none: "none"
    case .lock(let attempts): "lock:\(attempts)"
    case .delay: "delay"
    case .silent: "silent"
    }
  }

  /// Seconds to wait after `failures` wrong PINs under `delay`.
  package static func delaySeconds(failures: Int) -> Int {
    failures <= 0 ? 0 : min(3600, 1 << min(failures - 1, 12))
  }
}

/// Wrong-PIN bookkeeping, persisted with the key. `failures` is raised *before* a PIN is
/// tried and reset after a success, so a crash mid-attempt counts as a failure.
package struct PINLockState: Sendable, Equatable {
  package var failures = 0
  /// Unix seconds of the last failure (for `delay`).
  package var lastFailure = 0
  /// Set by `lock` when the limit is reached; only binding again clears it.
  package var lockedOut = false

  package init(failures: Int = 0, lastFailure: Int = 0, lockedOut: Bool = false) {
    self.failures = failures
    self.lastFailure = lastFailure
    self.lockedOut = lockedOut
  }

  var json: JSON {
    ["failures": .number(Double(failures)), "lastFailure": .number(Double(lastFailure)), "lockedOut": .bool(lockedOut)]
  }

  init?(json: JSON?) {
    guard let json, let failures = json["failures"]?.numberValue, let last = json["lastFailure"]?.numberValue else { return nil }
    self.failures = Int(failures)
    self.lastFailure = Int(last)
    self.lockedOut = json["lockedOut"]?.boolValue ?? false
  }
}

/// An APPLICATION_PIN key at rest: the 32-byte P-256 scalar sealed under
/// scrypt(PIN, salt, N, r, p).
///
/// Parameters: N = 2^17, r = 8, p = 1 (128 MiB, about half a second here) — the OWASP
/// Password Storage Cheat Sheet's minimum for scrypt. Every guess costs an attacker who holds
/// the file that much memory and time; it cannot make a 6-digit PIN (10^6 guesses) safe
/// against such an attacker, only slow (docs/binding.md). The sealing is AES-256-GCM
/// for `none`, `lock` and `delay` (a wrong PIN is detected and counted), and a one-time XOR pad
/// from the same derivation for `silent` (a wrong PIN goes unnoticed here).
package struct PINProtectedKey: Sendable, Equatable {
  package var salt: [UInt8]
  package var costLog2: Int
  package var blockSize: Int
  package var parallelism: Int
  /// AES-GCM nonce ‖ ciphertext ‖ tag, or the XOR-padded scalar for `silent`.
  package var sealed: [UInt8]
  package var pinPolicy: String
  package var lockPolicy: LockPolicy

  package static let defaultCostLog2 = 17

  package init(
    salt: [UInt8], costLog2: Int, blockSize: Int, parallelism: Int, sealed: [UInt8], pinPolicy: String, lockPolicy: LockPolicy
  ) {
    self.salt = salt
    self.costLog2 = costLog2
    self.blockSize = blockSize
    self.parallelism = parallelism
    self.sealed = sealed
    self.pinPolicy = pinPolicy
    self.lockPolicy = lockPolicy
  }

  /// Seals `scalar` under `pin`. `costLog2` is lowered only by tests of this library.
  package static func seal(
    scalar: [UInt8], pin: String, pinPolicy: PINPolicy, lockPolicy: LockPolicy, costLog2: Int = defaultCostLog2
  ) throws -> PINProtectedKey {
    let salt = (0..<16).map { _ in UInt8.random(in: 0...255) }
    var key = PINProtectedKey(
      salt: salt, costLog2: costLog2, blockSize: 8, parallelism: 1, sealed: [], pinPolicy: pinPolicy.description,
      lockPolicy: lockPolicy)
    let derived = try key.derive(pin)
    if lockPolicy == .silent {
      key.sealed = zip(scalar, derived.withUnsafeBytes { Array($0) }).map { $0 ^ $1 }
    } else {
      key.sealed = Array(try AES.GCM.seal(scalar, using: derived).combined!)
    }
    return key
  }

  /// The scalar for `pin`; nil when GCM says the PIN is wrong. Under `silent` a wrong PIN
  /// returns a different scalar.
  package func open(pin: String) throws -> [UInt8]? {
    let derived = try derive(pin)
    if lockPolicy == .silent {
      return zip(sealed, derived.withUnsafeBytes { Array($0) }).map { $0 ^ $1 }
    }
    do {
      return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: derived))
    } catch {
      return nil
    }
  }

  private func derive(_ pin: String) throws -> SymmetricKey {
    try KDF.Scrypt.deriveKey(
      from: Array(pin.utf8), salt: salt, outputByteCount: 32, rounds: 1 << costLog2, blockSize: blockSize,
      parallelism: parallelism, maxMemory: 256 << 20)
  }

  var json: JSON {
    [
      "protection": "pin", "kdf": "scrypt", "salt": .string(Base64URL.encode(salt)), "costLog2": .number(Double(costLog2)),
      "blockSize": .number(Double(blockSize)), "parallelism": .number(Double(parallelism)),
      "sealed": .string(Base64URL.encode(sealed)), "pinPolicy": .string(pinPolicy), "lockPolicy": .string(lockPolicy.description),
    ]
  }

  init?(json: JSON) {
    guard json["kdf"]?.stringValue == "scrypt", let salt = json["salt"]?.stringValue.flatMap(Base64URL.decode),
      let cost = json["costLog2"]?.numberValue, cost >= 10, cost <= 22,
      let block = json["blockSize"]?.numberValue, block >= 1, block <= 32,
      let parallel = json["parallelism"]?.numberValue, parallel >= 1, parallel <= 16,
      let sealed = json["sealed"]?.stringValue.flatMap(Base64URL.decode),
      let lockText = json["lockPolicy"]?.stringValue, let lock = try? LockPolicy(parsing: lockText)
    else { return nil }
    self.salt = salt
    self.costLog2 = Int(cost)
    self.blockSize = Int(block)
    self.parallelism = Int(parallel)
    self.sealed = sealed
    self.pinPolicy = json["pinPolicy"]?.stringValue ?? ""
    self.lockPolicy = lock
  }
}

extension String {
  fileprivate var trimmed: String {
    var text = Substring(self)
    while text.first == " " { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    return String(text)
  }
}
