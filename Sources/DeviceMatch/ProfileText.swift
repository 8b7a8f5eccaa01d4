import ProfileJSON

/// Reading one profile from JSON text, as the script's `JSON.parse` does. Elements of a stored
/// array (or AM listing) that are JSON strings are serialised profiles — how AM's DAO hands
/// them to the script — and are parsed once more (`unwrapString`); anywhere else the text is
/// the profile, exactly as the script would parse it (a JSON string stays a string).
public enum ProfileText {
  /// The profile in `bytes`, or where and why it is not JSON. `line`/`column` place the text
  /// in its file; errors inside a serialised string are placed at that string.
  public static func parse(
    _ bytes: UnsafeBufferPointer<UInt8>, unwrapString: Bool = false, line: Int = 1, column: Int = 1, offset: Int = 0
  ) -> Result<JSON, JSONParseError> {
    let value: JSON
    do {
      value = try JSONParser.parse(bytes)
    } catch {
      return .failure(error.shifted(line: line, column: column, offset: offset))
    }
    guard unwrapString, case .string(let serialised) = value else { return .success(value) }
    do {
      return .success(try JSONParser.parse(serialised))
    } catch {
      var placed = JSONParseError(message: "", offset: offset, line: line, column: column)
      placed.message = "in the serialised profile string: \(error)"
      return .failure(placed)
    }
  }

  public static func parse(_ bytes: [UInt8], unwrapString: Bool = false) -> Result<JSON, JSONParseError> {
    bytes.withUnsafeBufferPointer { parse($0, unwrapString: unwrapString) }
  }
}
