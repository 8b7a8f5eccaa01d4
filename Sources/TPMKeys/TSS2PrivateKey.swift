import SwiftASN1
import TPMProtocol

/// A TPM key in the `TSS2 PRIVATE KEY` PEM form that tpm2-openssl, openssl_tpm2_engine and
/// GnuTLS load (the "loadable key" of the TPM 2.0 key file format, OID 2.23.133.10.1.3):
///
///     TPMKey ::= SEQUENCE {
///       type        OBJECT IDENTIFIER,            -- id-loadablekey
///       emptyAuth   [0] EXPLICIT BOOLEAN OPTIONAL,
///       parent      INTEGER,                      -- 0x81000001, or TPM_RH_OWNER (0x40000001)
///       pubkey      OCTET STRING,                 -- the marshalled TPM2B_PUBLIC
///       privkey     OCTET STRING }                -- the marshalled TPM2B_PRIVATE
///
/// Written with SwiftASN1 (already in the build through swift-crypto) rather than by hand.
/// Still useless without the TPM: the private area is wrapped by its storage key.
public enum TSS2PrivateKey {
  public static let pemType = "TSS2 PRIVATE KEY"
  static let loadableKey: ASN1ObjectIdentifier = [2, 23, 133, 10, 1, 3]

  /// The parent handle the file names: the persistent SRK, or the owner hierarchy, under which
  /// loaders re-create the standard ECC storage key from its template.
  public static func parentHandle(_ parent: TPMKeyBlob.Parent) -> Int {
    switch parent {
    case .persistentSRK: 0x8100_0001
    case .templateSRK: 0x4000_0001
    }
  }

  /// The PEM of `blob`; `emptyAuth` for a key used without an authorization value.
  public static func pem(_ blob: TPMKeyBlob, emptyAuth: Bool) throws -> String {
    var serializer = DER.Serializer()
    try serializer.appendConstructedNode(identifier: .sequence) { coder in
      try coder.serialize(loadableKey)
      if emptyAuth { try coder.serialize(true, explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) }
      try coder.serialize(parentHandle(blob.parent))
      try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(blob.publicArea)))
      try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(blob.privateArea)))
    }
    return PEMDocument(type: pemType, derBytes: serializer.serializedBytes).pemString + "\n"
  }
}
