import FuzzSupport
import ProfileJSON
import TPMProtocol

// Fuzz target: the one parser of TPM wire structures (TPMProtocol) and the attestation
// documents a device sends. The first byte chooses the structure; the rest is its bytes.
// Invariants: no crash on any input; what parses writes back to the very same bytes (a public
// area, a key file), so no structure has two spellings; a parsed RSA key is within the limits;
// an area called the canonical EK is the template's area for its key.
#if canImport(Glibc)
  import Glibc
#endif

func fuzzTPMWire(_ input: UnsafeBufferPointer<UInt8>) {
  guard let selector = input.first else { return }
  let bytes = Array(input.dropFirst())
  switch selector % 4 {
  case 0:
    guard let key = try? TPMPublic(tpm2b: bytes) else { return }
    fuzzCheck(key.tpm2b == bytes, "a public area did not write back to its bytes")
    fuzzCheck(key.name.count == 34, "a name of \(key.name.count) bytes")
    if case .rsa(let modulus, let exponent) = key.material {
      fuzzCheck((try? TPMPublic.checkRSA(modulus: modulus, exponent: exponent)) != nil, "an RSA key outside the limits parsed")
    }
    if key.isCanonicalEndorsementKey {
      fuzzCheck(TPMPublic.endorsementKeyArea(for: key.material) == key.area, "a canonical EK that is not the template's")
    }
  case 1:
    guard let attest = try? TPMAttest(bytes) else { return }
    if case .quote(let selection, _) = attest.attested {
      for bank in selection { fuzzCheck(bank.indices.allSatisfy { $0 < bank.bitmap.count * 8 }, "a PCR index outside its bitmap") }
    }
  case 2:
    guard let blob = try? TPMKeyBlob(bytes: bytes) else { return }
    fuzzCheck(blob.bytes == bytes, "a key file did not write back to its bytes")
    fuzzCheck((try? blob.publicKey()) != nil, "a key file whose public area does not parse")
  default:
    guard let json = try? JSONParser.parse(bytes) else { return }
    _ = try? AttestationRequest(json: json)
    _ = try? AttestationChallenge(json: json)
    _ = try? AttestationAnswer(json: json)
    _ = try? KeyCertification(json: json)
  }
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-tpm-wire", fuzzTPMWire) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzTPMWire(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
