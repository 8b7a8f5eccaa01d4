// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "fr-profile",
  products: [
    .executable(name: "fr-profile", targets: ["fr-profile"]),
    .library(name: "Collectors", targets: ["Collectors"]),
    .library(name: "ProfileJSON", targets: ["ProfileJSON"]),
    .library(name: "DeviceMatch", targets: ["DeviceMatch"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    // 4.x: imports only FoundationEssentials (3.x drags in full Foundation and ICU).
    .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
  ],
  targets: [
    .executableTarget(
      name: "fr-profile",
      dependencies: [
        "Collectors",
        "ProfileJSON",
        "DeviceMatch",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // The device profile: collectors over a root-relative system source, identity, tamper score.
    .target(
      name: "Collectors",
      dependencies: [
        "ProfileJSON",
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    // The JSON value shared by collection (output) and matching (JavaScript semantics).
    .target(name: "ProfileJSON"),
    .testTarget(name: "ProfileJSONTests", dependencies: ["ProfileJSON"]),
    // The device-match script's semantics (src/metadata.js, src/location.js, src/index.js).
    .target(name: "DeviceMatch", dependencies: ["ProfileJSON"]),
    .testTarget(name: "DeviceMatchTests", dependencies: ["DeviceMatch", "ProfileJSON"]),
    // Runs the built binary as a subprocess and checks stdout, stderr and exit codes.
    .testTarget(name: "CLITests", dependencies: ["ProfileJSON"]),
  ]
)
