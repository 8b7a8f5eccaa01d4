import ProfileCLI
import SystemCalls

/// Standard input, as bytes (at most 1 MiB: what is read from it is a password or a token);
/// empty when it cannot be read.
func readStandardInput() -> [UInt8] {
  (try? readAll(0, limit: 1 << 20)) ?? []
}

/// A secret piped on stdin for `flag` (`--password-stdin`, `--key-pin-stdin`): the first line's
/// text without one trailing newline (CRLF too); empty or not UTF-8 is exit 65 naming the flag.
func secretFromStandardInput(_ flag: String, what: String) throws -> String {
  var bytes = readStandardInput()
  if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
  if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
  guard !bytes.isEmpty else { throw Failure(.dataError, "\(flag): standard input holds no \(what).") }
  guard let secret = String(validating: bytes, as: UTF8.self) else { throw Failure(.dataError, "\(flag): the \(what) is not UTF-8.") }
  return secret
}
