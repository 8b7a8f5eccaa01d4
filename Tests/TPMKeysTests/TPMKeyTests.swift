import Crypto
import Foundation
import Glibc
import TPMKeys
import TPMProtocol
import TestSupport
import Testing

/// Keys in a real TPM protocol implementation: each test starts its own swtpm.
@Suite("TPM keys against swtpm", .timeLimit(.minutes(10)))
struct TPMKeyTests {
  @Test func createdKeySignsAndSwiftCryptoVerifies() throws {
    try withSWTPM { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      let blob = try context.createSigningKey()
      let publicKey = try TPMContext.publicKey(of: blob)
      let message = Array("header.payload".utf8)
      let raw = try context.sign(message, with: blob)
      #expect(raw.count == 64)
      let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
      #expect(publicKey.isValidSignature(signature, for: SHA256.hash(data: message)))
      #expect(!publicKey.isValidSignature(signature, for: SHA256.hash(data: Array("header.other".utf8))))
    }
  }

  @Test func blobRoundTripsThroughItsFileForm() throws {
    try withSWTPM { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      let blob = try context.createSigningKey()
      let reread = try TPMKeyBlob(bytes: blob.bytes)
      #expect(reread == blob)
      // A second connection (another process would do the same) signs with the re-read blob.
      let raw = try TPMContext.open(tcti: tpm.tcti).sign([1, 2, 3], with: reread)
      let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
      #expect(try TPMContext.publicKey(of: blob).isValidSignature(signature, for: SHA256.hash(data: [1, 2, 3] as [UInt8])))
    }
  }

  @Test func publicKeyIsTheSubjectPublicKeyInfoTheIdentifierHashes() throws {
    try withSWTPM { tpm in
      let blob = try TPMContext.open(tcti: tpm.tcti).createSigningKey()
      let der = Array(try TPMContext.publicKey(of: blob).derRepresentation)
      // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING 04‖X‖Y }: 91 bytes.
      #expect(der.count == 91)
      #expect(der.starts(with: [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]))
      #expect(try P256.Signing.PublicKey(derRepresentation: der).rawRepresentation == TPMContext.publicKey(of: blob).rawRepresentation)
    }
  }

  @Test func keyFromAnotherTPMFailsToLoadAsForeign() throws {
    try withSWTPM { first in
      try withSWTPM { second in
        let blob = try TPMContext.open(tcti: first.tcti).createSigningKey()
        let other = try TPMContext.open(tcti: second.tcti)
        #expect(throws: TPMError.self) { try other.verifyLoads(blob) }
        do {
          _ = try other.sign([1], with: blob)
          Issue.record("a key of another TPM signed")
        } catch let error as TPMError {
          if error.code != .foreignKey { Issue.record("expected foreignKey, got \(error)") }
        }
      }
    }
  }

  @Test func persistentSRKIsUsedWhenPresent() throws {
    try withSWTPM { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      let before = try context.createSigningKey()
      #expect(before.parent == .templateSRK)
      try context.persistStorageKey()
      let after = try context.createSigningKey()
      #expect(after.parent == .persistentSRK)
      // Both still sign: each loads under the storage key it was made under.
      _ = try context.sign([1], with: before)
      _ = try context.sign([1], with: after)
    }
  }

  @Test func authValueIsRequiredAndWrongValuesReachTheLockout() throws {
    try withSWTPM { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      try context.setDictionaryAttackParameters(maxTries: 3, recoverySeconds: 600, lockoutRecoverySeconds: 600)
      let pin = Array("482916".utf8)
      let blob = try context.createSigningKey(authValue: pin)
      _ = try context.sign([1], with: blob, authValue: pin)
      #expect(throws: TPMError.authFailed) { try context.sign([1], with: blob, authValue: Array("000000".utf8)) }
      #expect(throws: TPMError.authFailed) { try context.sign([1], with: blob, authValue: Array("111111".utf8)) }
      #expect(throws: TPMError.authFailed) { try context.sign([1], with: blob, authValue: Array("222222".utf8)) }
      // maxTries reached: even the right PIN is refused by the TPM now.
      #expect(throws: TPMError.lockout) { try context.sign([1], with: blob, authValue: pin) }
    }
  }

  @Test func noTPMAtTheTCTIIsUnavailable() throws {
    #expect(throws: TPMError.self) { try TPMContext.open(tcti: "swtpm:host=127.0.0.1,port=1") }
    do {
      _ = try TPMContext.open(tcti: "device:/nonexistent/tpmrm0")
      Issue.record("a missing device opened")
    } catch {
      guard error.code == .unavailable else {
        Issue.record("expected unavailable, got \(error)")
        return
      }
    }
  }

  @Test func corruptBlobsAreRejectedBeforeTheTPM() {
    #expect(throws: TPMError.self) { try TPMKeyBlob.parsed(Array("FRPTPM1\n".utf8) + [1, 0, 9, 1]) }
    #expect(throws: TPMError.self) { try TPMKeyBlob.parsed(Array("-----BEGIN PRIVATE KEY-----".utf8)) }
  }

  @Test func tctiComesFromTheOptionThenTheEnvironmentThenTheDefault() throws {
    #expect(try TPMConfiguration.tcti(option: "swtpm:port=1", environment: ["FR_PROFILE_TCTI": "mssim"]) == "swtpm:port=1")
    #expect(try TPMConfiguration.tcti(option: nil, environment: ["FR_PROFILE_TCTI": "mssim"]) == "mssim")
    #expect(try TPMConfiguration.tcti(option: nil, environment: [:]) == "device:/dev/tpmrm0")
    #expect(try TPMConfiguration.tcti(option: nil, environment: ["FR_PROFILE_TCTI": "device:/dev/tpm0"]) == "device:/dev/tpm0")
  }

  @Test(
    "a TCTI that is a library path or runs a command is refused, naming where it came from",
    arguments: ["/tmp/evil/libtss2-tcti-x.so", "./libtss2-tcti-device.so.0", "cmd:sh -c id", "libtss2-tcti-device.so.0:/dev/tpm0", "pcap"])
  func tctiOutsideTheAcceptedNamesIsRefused(value: String) {
    #expect(throws: TPMConfigurationError(source: "FR_PROFILE_TCTI", value: value)) {
      try TPMConfiguration.tcti(option: nil, environment: ["FR_PROFILE_TCTI": value])
    }
    #expect(throws: TPMConfigurationError(source: "--tcti", value: value)) { try TPMConfiguration.tcti(option: value, environment: [:]) }
  }

  @Test("a key without a PIN is noDA: the TPM's lockout, reached through a PIN key, does not stop it")
  func keysWithoutAPINAreOutsideTheLockout() throws {
    try withSWTPM { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      try context.setDictionaryAttackParameters(maxTries: 2, recoverySeconds: 600, lockoutRecoverySeconds: 600)
      let pin = Array("482916".utf8)
      let guarded = try context.createSigningKey(authValue: pin)
      let open = try context.createSigningKey()
      #expect(try TPMContext.isNoDA(open) && !TPMContext.isNoDA(guarded))
      for wrong in ["000000", "111111"] {
        #expect(throws: TPMError.authFailed) { try context.sign([1], with: guarded, authValue: Array(wrong.utf8)) }
      }
      #expect(throws: TPMError.lockout) { try context.sign([1], with: guarded, authValue: pin) }
      let raw = try context.sign([2], with: open)
      let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
      #expect(try TPMContext.publicKey(of: open).isValidSignature(signature, for: SHA256.hash(data: [2] as [UInt8])))
    }
  }

  @Test("parallel key creation on a TPM without a resource manager: object-memory warnings are retried, every creation succeeds")
  func parallelCreationsRetryTransientWarnings() async throws {
    // Minutes on a busy machine: on a thread of its own, not the cooperative pool's (onOwnThread).
    let results = try await onOwnThread {
      try withSWTPM { tpm in
        let tcti = tpm.tcti
        // Six clients take turns at three object slots: more clients than slots, and what this
        // is about is that every object-memory warning is retried until the work is done.
        // swtpm serves one connection at a time and queues the rest in a short listen backlog;
        // with the suite and a release build beside it, a queued client's TCP connect timed out
        // (Linux gives up on a SYN after ~127 s) and tpm2-tss reported "IO failure (0xa000a)".
        // That is the simulator's socket, not a TPM answer (the kernel's resource manager has
        // no backlog), so a client whose connection failed connects again, 5 times at most.
        // A queued client also waits for its first answer while the others' sessions run: in a
        // fresh-clone CI run (fuzz and example builds beside the suite) three of the six waited
        // more than the default 60 s. So the clients here wait up to five minutes for an answer.
        return onThreads(6) { _ -> String in
          func session<T: Sendable>(_ body: (TPMContext) throws(TPMError) -> T) throws(TPMError) -> T {
            var attempt = 1
            while true {
              let connection = TPMConnection(tcti: tcti, responseTimeout: 300)
              defer { connection.close() }
              do { return try connection.run(budget: 120, body) } catch {
                guard error.code == .unavailable, error.detail?.contains("0xa000a") == true, attempt < 5 else { throw error }
                attempt += 1
              }
            }
          }
          do {
            let blob = try session { (tpm) throws(TPMError) in try tpm.createSigningKey() }
            let raw = try session { (tpm) throws(TPMError) in try tpm.sign([3], with: blob) }
            return raw.count == 64 ? "ok" : "short signature"
          } catch {
            return "\(error)"
          }
        }
      }
    }
    #expect(results.count == 6)
    #expect(results.allSatisfy { $0 == "ok" }, "\(results.filter { $0 != "ok" })")
  }
}

/// A persistent SRK made with `tpm2_createprimary`'s defaults (no noDA).
@Suite(.timeLimit(.minutes(10)))
struct PersistentSRKWithoutNoDATests {
  @Test(
    "such an SRK never parents new keys, so keys without a PIN stay outside another user's lockout; a key already under it is reported as locked out through it"
  )
  func newKeysAvoidItAndOldKeysSayWhy() throws {
    try withSWTPM { tpm in
      let directory = tpm.stateDirectory
      for (tool, arguments) in [
        ("tpm2_createprimary", ["-C", "o", "-G", "ecc", "-c", "srk.ctx"]),
        ("tpm2_evictcontrol", ["-C", "o", "-c", "srk.ctx", "0x81000001"]),
        ("tpm2_flushcontext", ["-t"]),  // no resource manager: free the transient slots
        (
          "tpm2_create",
          [
            "-C", "0x81000001", "-G", "ecc256:ecdsa-sha256", "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign|noda",
            "-u", "old.pub", "-r", "old.priv",
          ]
        ),
      ] {
        let result = try tpm.tool(tool, arguments, directory: directory)
        try #require(result.status == 0, "\(tool): \(result.stderr)")
      }
      let old = TPMKeyBlob(
        parent: .persistentSRK, publicArea: try bytes(directory + "/old.pub"), privateArea: try bytes(directory + "/old.priv"))
      let context = try TPMContext.open(tcti: tpm.tcti)
      _ = try context.sign([1], with: old)
      try context.setDictionaryAttackParameters(maxTries: 2, recoverySeconds: 600, lockoutRecoverySeconds: 600)
      let pin = Array("482916".utf8)
      let guarded = try context.createSigningKey(authValue: pin)
      let open = try context.createSigningKey()
      #expect(guarded.parent == .templateSRK && open.parent == .templateSRK)
      for wrong in ["000000", "111111"] {
        #expect(throws: TPMError.authFailed) { try context.sign([1], with: guarded, authValue: Array(wrong.utf8)) }
      }
      #expect(throws: TPMError.lockout) { try context.sign([1], with: guarded, authValue: pin) }
      _ = try context.sign([2], with: open)
      #expect(throws: TPMError.lockoutThroughParent) { try context.sign([3], with: old) }
    }
  }

  func bytes(_ path: String) throws -> [UInt8] {
    guard let file = fopen(path, "rb") else { throw SWTPMError("cannot open \(path)") }
    defer { fclose(file) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = fread(&buffer, 1, buffer.count, file)
      if count == 0 { return out }
      out += buffer[0..<count]
    }
  }
}

/// A TPM that stops answering ends the operation at the response
/// timeout (the receive timeout on the swtpm TCTI's sockets), and nothing more is sent.
@Suite(.timeLimit(.minutes(10)))
struct SilentTPMTests {
  @Test("an operation on a stopped swtpm throws timedOut after the response timeout, not never")
  func aStoppedTPMTimesOut() throws {
    try withSWTPM { tpm in
      let connection = TPMConnection(tcti: tpm.tcti, responseTimeout: 1)
      defer { connection.close() }
      let key = try connection.run { (context) throws(TPMError) in try context.createSigningKey() }
      kill(tpm.pid, SIGSTOP)
      defer { kill(tpm.pid, SIGCONT) }
      var start = timespec()
      clock_gettime(CLOCK_MONOTONIC, &start)
      #expect(throws: TPMError.timedOut(seconds: 1)) {
        _ = try connection.run { (context) throws(TPMError) in try context.sign([1], with: key) }
      }
      var end = timespec()
      clock_gettime(CLOCK_MONOTONIC, &end)
      #expect(end.tv_sec - start.tv_sec < 10)
      // Answering again, the TPM serves a new connection (once the objects the abandoned one left
      // in swtpm's three slots, with no resource manager to flush them, are flushed).
      kill(tpm.pid, SIGCONT)
      #expect(try tpm.tool("tpm2_flushcontext", ["-t"]).status == 0)
      _ = try connection.run { (context) throws(TPMError) in try context.sign([2], with: key) }
    }
  }
}

/// Any TPM user can plant a storage key at 0x81000001 while the owner
/// hierarchy's auth is empty (as on Linux by default). Only the owner seed's own primary for a
/// TCG SRK template parents new keys: one that can be re-created when someone evicts it.
@Suite(.timeLimit(.minutes(10)))
struct PlantedSRKTests {
  /// Runs tpm2-tools against `tpm`, in its state directory; each must succeed.
  func tools(_ tpm: SWTPM, _ steps: [(String, [String])]) throws {
    for (tool, arguments) in steps {
      let result = try tpm.tool(tool, arguments, directory: tpm.stateDirectory)
      try #require(result.status == 0, "\(tool): \(result.stderr)")
    }
  }

  @Test(
    "a planted SRK with every trustworthy attribute is passed over for new keys, which load after the planter evicts it; an old key under it says what happened"
  )
  func plantedStorageKeyIsPassedOver() throws {
    try withSWTPM { tpm in
      // A storage key as trustworthy by its attributes as the template's — but a child of
      // another primary, made by someone else, and evictable by them.
      let storage = "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt"
      try tools(
        tpm,
        [
          // No resource manager: every tool's transient objects are flushed after it.
          ("tpm2_createprimary", ["-C", "o", "-G", "ecc", "-c", "other.ctx"]),
          ("tpm2_flushcontext", ["-t"]),
          ("tpm2_create", ["-C", "other.ctx", "-G", "ecc256:aes128cfb", "-a", storage, "-u", "planted.pub", "-r", "planted.priv"]),
          ("tpm2_flushcontext", ["-t"]),
          ("tpm2_load", ["-C", "other.ctx", "-u", "planted.pub", "-r", "planted.priv", "-c", "planted.ctx"]),
          ("tpm2_flushcontext", ["-t"]),
          ("tpm2_evictcontrol", ["-C", "o", "-c", "planted.ctx", "0x81000001"]),
          ("tpm2_flushcontext", ["-t"]),
          (
            "tpm2_create",
            [
              "-C", "0x81000001", "-G", "ecc256:ecdsa-sha256", "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign|noda",
              "-u", "old.pub", "-r", "old.priv",
            ]
          ),
        ])
      let old = TPMKeyBlob(
        parent: .persistentSRK, publicArea: try PersistentSRKWithoutNoDATests().bytes(tpm.stateDirectory + "/old.pub"),
        privateArea: try PersistentSRKWithoutNoDATests().bytes(tpm.stateDirectory + "/old.priv"))
      let context = try TPMContext.open(tcti: tpm.tcti)
      let fresh = try context.createSigningKey()
      #expect(fresh.parent == .templateSRK, "a new key was made under the planted SRK")
      _ = try context.sign([1], with: old)  // made under it earlier: loads there while it is there
      context.close()
      try tools(tpm, [("tpm2_evictcontrol", ["-C", "o", "-c", "0x81000001"])])
      let after = try TPMContext.open(tcti: tpm.tcti)
      _ = try after.sign([2], with: fresh)
      do {
        _ = try after.sign([3], with: old)
        Issue.record("a key made under an evicted SRK loaded")
      } catch let error as TPMError {
        guard error.code == .foreignKey, let detail = error.detail else {
          Issue.record("expected foreignKey, got \(error)")
          return
        }
        #expect(detail.contains("no longer has") && detail.contains("0x81000001"), "\(detail)")
      }
    }
  }

  /// A storage key with every SRK attribute, made by tpm2_createprimary with `algorithm`, persisted
  /// at 0x81000001 as another TPM user could.
  func plantStorageKey(_ tpm: SWTPM, algorithm: [String]) throws {
    let attributes = "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt"
    try tools(
      tpm,
      [
        ("tpm2_createprimary", ["-C", "o"] + algorithm + ["-a", attributes, "-c", "srk.ctx"]),
        ("tpm2_evictcontrol", ["-C", "o", "-c", "srk.ctx", "0x81000001"]), ("tpm2_flushcontext", ["-t"]),
      ])
  }

  /// tpm2-tools fills no unique field (the TCG template has 32 zero bytes in x and y), so its
  /// primary is another key of the owner seed: one fr-profile could not re-create.
  @Test("an SRK made with tpm2_createprimary -G ecc and the SRK attributes is not the template's: new keys pass it over")
  func toolMadeStorageKeyIsPassedOver() throws {
    try withSWTPM { tpm in
      try plantStorageKey(tpm, algorithm: ["-G", "ecc"])
      let context = try TPMContext.open(tcti: tpm.tcti)
      #expect(try context.createSigningKey().parent == .templateSRK)
      #expect(context.takeCheckedStorageKeyName() == nil)
    }
  }

  /// swtpm_setup's `--create-spk --ecc` makes a P-384 storage key (SHA-384 name, AES-256-CFB):
  /// no TCG SRK template (Provisioning Guidance: RSA 2048, ECC P-256), so nothing proves it is
  /// the seed's own primary rather than a planted key. It is passed over without a CreatePrimary
  /// to compare, and keys go under the P-256 template SRK, as on a TPM without a persistent SRK.
  @Test("a P-384 SRK at 0x81000001 (swtpm_setup --create-spk --ecc) is passed over for the P-256 template SRK, without a check")
  func p384StorageKeyIsPassedOver() throws {
    try withSWTPM { tpm in
      try plantStorageKey(tpm, algorithm: ["-g", "sha384", "-G", "ecc384:null:aes256cfb"])
      let context = try TPMContext.open(tcti: tpm.tcti)
      let key = try context.createSigningKey()
      #expect(key.parent == .templateSRK)
      #expect(context.takeCheckedStorageKeyName() == nil)
      _ = try context.sign([1, 2, 3], with: key)
    }
  }

  @Test("the template's own SRK made persistent parents new keys, checked once by CreatePrimary; evicted, its keys load again")
  func templateStorageKeyIsTakenAndSurvivesEviction() throws {
    try withSWTPM { tpm in
      try TPMContext.open(tcti: tpm.tcti).persistStorageKey()
      let context = try TPMContext.open(tcti: tpm.tcti)
      let key = try context.createSigningKey()
      #expect(key.parent == .persistentSRK)
      let checked = try #require(context.takeCheckedStorageKeyName())
      #expect(context.takeCheckedStorageKeyName() == nil)
      context.close()
      // Remembered: a later connection takes it without checking again.
      let later = try TPMContext.open(tcti: tpm.tcti)
      later.knownStorageKeyNames = [checked]
      #expect(try later.createSigningKey().parent == .persistentSRK)
      #expect(later.takeCheckedStorageKeyName() == nil)
      later.close()
      try tools(tpm, [("tpm2_evictcontrol", ["-C", "o", "-c", "0x81000001"])])
      let evicted = try TPMContext.open(tcti: tpm.tcti)
      _ = try evicted.sign([1], with: key)
    }
  }
}
