import DeviceIdentity
import ProfileJSON
import StateStore
import Synchronization
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The TPM connection a process keeps: opened at the first operation, its storage
/// key, loaded keys and salted session reused by the ones that follow — the binding, the
/// attestation and the evidence of one journey share it — and flushed by `close()`. One
/// operation at a time (ESAPI is not thread-safe); shareable between threads.
///
///     let tpm = TPMConnection(tcti: "device:/dev/tpmrm0")
///     defer { tpm.close() }
///     let blob = try tpm.run { try $0.createSigningKey(keepLoaded: true) }
///     let signature = try tpm.run { try $0.sign(message, with: blob) }   // no Load
public final class TPMConnection: Sendable {
  public let tcti: String
  /// Where the names of storage keys checked to be the TPM's template SRK are remembered
  /// (`storageKeyNamesFile` in that state directory), so a persistent SRK is checked with one
  /// CreatePrimary once rather than in every process; nil remembers them for the connection.
  public let stateDirectory: String?
  private let context = Mutex<TPMContext?>(nil)

  /// The file, in the state directory, of the names of persistent SRKs checked to be the TPM's
  /// own primary for a TCG SRK template: base64url, one a line.
  public static let storageKeyNamesFile = "tpm-storage-keys"

  /// Seconds each TPM response may take (`TPMContext.responseTimeout`).
  public let responseTimeout: Double

  public init(tcti: String, stateDirectory: String? = nil, responseTimeout: Double = TPMContext.defaultResponseTimeout) {
    self.tcti = tcti
    self.stateDirectory = stateDirectory
    self.responseTimeout = responseTimeout
  }

  /// Runs `body` on the connection (opened now if it is not), retrying the whole of it — every
  /// transient object flushed in between, what was looked up kept (a retry does not ask again
  /// for the persistent SRK, a command that needs one of the slots it waits for) — while the TPM answers
  /// with a transient warning (`TPMError.busy`: out of object memory while other clients hold
  /// the slots, RETRY, YIELDED, TESTING), with a jittered exponential backoff for at most
  /// `budget` seconds. Without a resource manager a TPM has 3 object slots: 20 parallel
  /// bindings on swtpm ran into 0x902 in 14 of 20 before the retry. A connection
  /// that failed (no TPM answers) is closed, and the next call opens a new one.
  public func run<T: Sendable>(budget: Double = 10, _ body: (TPMContext) throws(TPMError) -> T) throws(TPMError) -> T {
    try context.withLock { (open: inout TPMContext?) throws(TPMError) -> T in
      let start = monotonicSeconds()
      var pause = 0.01
      while true {
        let tpm: TPMContext
        if let open {
          tpm = open
        } else {
          tpm = try TPMContext.open(tcti: tcti, keepsObjects: true, responseTimeout: responseTimeout)
          tpm.knownStorageKeyNames = rememberedStorageKeyNames()
        }
        open = tpm
        do throws(TPMError) {
          let result = try body(tpm)
          if let name = tpm.takeCheckedStorageKeyName() { remember(storageKeyName: name, among: tpm.knownStorageKeyNames) }
          return result
        } catch let error where error.code == .busy {
          let (call, detail) = (error.call ?? "", error.detail ?? "")
          tpm.flushTransients()
          let spent = monotonicSeconds() - start
          guard spent + pause < budget else {
            throw .busy(call: call, detail: detail + "; still busy after \(Int(budget)) s of retries")
          }
          usleep(useconds_t(pause * Double.random(in: 0.5...1.5) * 1e6))
          pause = min(pause * 2, 0.5)
        } catch let error where error.code == .unavailable {
          tpm.close()
          open = nil
          let at = error.tcti ?? ""
          throw .unavailable(tcti: at.isEmpty ? tcti : at, detail: error.detail ?? "")
        } catch let error where error.code == .timedOut {
          // A response may still come: the connection is out of step with the TPM.
          tpm.close()
          open = nil
          throw error
        }
      }
    }
  }

  /// The names remembered in the state directory; none when there is none or it cannot be
  /// read (then the persistent SRK is checked again: a cost, never a risk).
  private func rememberedStorageKeyNames() -> Set<[UInt8]> {
    guard let stateDirectory,
      let bytes = try? StateDirectory.open(stateDirectory, create: false).readBytes(
        Self.storageKeyNamesFile, requirement: .ownerWritable(maximumSize: 4096))
    else { return [] }
    return Set(bytes.split(separator: UInt8(ascii: "\n")).compactMap { Base64URL.decode(String(decoding: $0, as: UTF8.self)) })
  }

  /// Adds `name` to the state directory's file (best effort: a state directory that cannot be
  /// written costs a CreatePrimary in the next process).
  private func remember(storageKeyName name: [UInt8], among names: Set<[UInt8]>) {
    guard let stateDirectory, let directory = try? StateDirectory.open(stateDirectory, create: true) else { return }
    let text = names.union([name]).map { Base64URL.encode($0) }.sorted().joined(separator: "\n")
    _ = try? directory.write(Self.storageKeyNamesFile, Array((text + "\n").utf8), mode: 0o600, replace: true)
  }

  /// Flushes what the connection loaded and closes it; the next `run` opens a new one.
  public func close() {
    context.withLock { open in
      open?.close()
      open = nil
    }
  }

  /// `close()`, unless an operation holds the connection (a process ending from another
  /// thread while the TPM does not answer must not wait for it): then the operation's own
  /// end, or the kernel's resource manager, frees what it loaded.
  public func closeUnlessBusy() {
    _ = context.withLockIfAvailable { open in
      open?.close()
      open = nil
    }
  }
}
