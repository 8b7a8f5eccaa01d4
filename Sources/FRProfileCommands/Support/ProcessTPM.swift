import Synchronization
import TPMKeys
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The one TPM connection of this process: the key store, the attester and the
/// identity's checks of a command share it, so a journey opens the TPM once, looks up or makes
/// its storage key once, and keeps a key loaded from its binding's evidence to its signature.
/// What it loaded is flushed when the process exits (`atexit`; the kernel's resource manager
/// would flush it too, a TPM without one would not). A watchdog's `_exit` skips that, and so
/// does an exit while an operation still holds the connection.
enum ProcessTPM {
  private static let connections = Mutex<[String: TPMConnection]>([:])

  /// The connection to the TPM at `tcti`, opened at its first operation; the names of the
  /// storage keys checked to be the TPM's template SRK are remembered in `stateDirectory` (the
  /// first caller's: one command has one).
  static func connection(_ tcti: String, stateDirectory: String?, responseTimeout: Double = TPMContext.defaultResponseTimeout)
    -> TPMConnection
  {
    connections.withLock { table in
      if let open = table[tcti] { return open }
      if table.isEmpty { atexit { ProcessTPM.closeAll() } }
      let connection = TPMConnection(tcti: tcti, stateDirectory: stateDirectory, responseTimeout: responseTimeout)
      table[tcti] = connection
      return connection
    }
  }

  private static func closeAll() {
    _ = connections.withLockIfAvailable { table in
      for connection in table.values { connection.closeUnlessBusy() }
    }
  }
}
