// swift-tools-version:6.1
import PackageDescription

// Two programs an embedder might write, each depending on one of fr-profile's library products
// and nothing else of it: what the layers promise (docs/api.md). `make test` builds them and
// checks their link maps hold no symbol of Collectors or libudev (scripts/check-examples.sh).
let package = Package(
  name: "Embedders",
  dependencies: [
    .package(name: "fr-profile", path: "../.."),
    .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
  ],
  targets: [
    // The OAuthTokens product alone: lists the OAuth 2.0 tokens fr-profile keeps in a state
    // directory, with their expiry.
    .executableTarget(name: "token-list", dependencies: [.product(name: "OAuthTokens", package: "fr-profile")]),
    // The TPMAttestation product, with the products its API speaks (nothing is re-exported):
    // TPMProtocol's documents, ProfileJSON's values, swift-certificates' Certificate. Checks a
    // device's attestation request against TPM manufacturer roots, as a verifier would.
    .executableTarget(
      name: "ek-check",
      dependencies: [
        .product(name: "TPMAttestation", package: "fr-profile"), .product(name: "TPMProtocol", package: "fr-profile"),
        .product(name: "ProfileJSON", package: "fr-profile"), .product(name: "X509", package: "swift-certificates"),
      ]),
  ]
)
