import SystemCalls

/// Standard input, as bytes (at most 1 MiB: what is read from it is a password or a token);
/// empty when it cannot be read.
func readStandardInput() -> [UInt8] {
  (try? readAll(0, limit: 1 << 20)) ?? []
}
