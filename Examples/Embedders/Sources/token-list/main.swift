import OAuthTokens

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// usage: token-list STATE_DIRECTORY
// Prints one line per OAuth 2.0 client whose tokens fr-profile keeps there: the server, realm,
// client and whether its access token is still valid. Exit 0, or 1 with a message.
func fail(_ message: String, status: Int32) -> Never {
  let bytes = Array((message + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
  exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 2 else { fail("usage: token-list STATE_DIRECTORY", status: 2) }
do {
  let store = try TokenStore.open(stateDirectory: arguments[1], create: false)
  let now = Double(time(nil))
  for tokens in try store.all() {
    let left = tokens.expiresAt - now
    let state = left > 0 ? "valid for \(Int(left)) s" : "expired"
    print("\(tokens.server) realm \(tokens.realm) client \(tokens.clientId): \(state)")
  }
} catch {
  fail("token-list: \(error)", status: 1)
}
