// swift-tools-version:6.1
import PackageDescription

/// With the trait Fuzzing (`make fuzz`): the code the fuzz targets drive is compiled with
/// libFuzzer's coverage and AddressSanitizer, so only our targets are rebuilt for fuzzing — the
/// dependencies (BoringSSL above all) keep the objects of the ordinary build.
let fuzzed: [SwiftSetting] = [.unsafeFlags(["-sanitize=fuzzer,address"], .when(traits: ["Fuzzing"]))]
/// Linked by lld (shipped with the toolchain): gold fails on these binaries' debug info. A linker
/// setting, not `-Xswiftc` on the command line, which would be in every compile job too and so
/// recompile every Swift dependency for the fuzz build.
let fuzzLinked: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"], .when(traits: ["Fuzzing"]))]

/// Tests are compiled without optimisation in the release configuration too (`make test` builds
/// the suite in release, on the shipped binary's objects): optimising 17k lines of tests costs
/// build minutes and gains the suite nothing, its time is in the processes it runs.
let testCode: [SwiftSetting] = [.unsafeFlags(["-Onone"], .when(configuration: .release))]

/// A fuzz target (Fuzz/<directory>): replays files in an ordinary build, runs libFuzzer with
/// the trait Fuzzing.
func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency], _ directory: String) -> Target {
  .executableTarget(
    name: name, dependencies: ["FuzzSupport"] + dependencies, path: "Fuzz/" + directory, swiftSettings: fuzzed,
    linkerSettings: fuzzLinked)
}

let package = Package(
  name: "fr-profile",
  products: [
    // One executable for every command, the client's and the verifier's. libudev, libcurl,
    // libtss2 and libpam are loaded with dlopen by the command that needs them (Sources/CUdev,
    // CCurl, CTSS2, CPAM, CQREncode, CFIDO2), so collect maps none of them and the binary needs only the C runtime
    // (docs/install.md).
    .executable(name: "fr-profile", targets: ["fr-profile"]),
    .library(name: "Collectors", targets: ["Collectors"]),
    .library(name: "SystemCalls", targets: ["SystemCalls"]),
    .library(name: "DeviceFacts", targets: ["DeviceFacts"]),
    .library(name: "DeviceIdentity", targets: ["DeviceIdentity"]),
    .library(name: "ProfileJSON", targets: ["ProfileJSON"]),
    .library(name: "Journey", targets: ["Journey"]),
    .library(name: "OAuthTokens", targets: ["OAuthTokens"]),
    .library(name: "Login", targets: ["Login"]),
    .library(name: "JourneyProfiler", targets: ["JourneyProfiler"]),
    .library(name: "DeviceMatch", targets: ["DeviceMatch"]),
    // The verifier, for a server-side Swift program: no client target, no tpm2-tss.
    .library(name: "TPMAttestation", targets: ["TPMAttestation"]),
    .library(name: "TPMProtocol", targets: ["TPMProtocol"]),
  ],
  traits: [
    .trait(
      name: "SymbolOrdering",
      description: "Release fr-profile linked by lld with bench/collect-order.txt (`make release`)"
    ),
    .trait(
      name: "Fuzzing",
      description: "libFuzzer and AddressSanitizer in the fuzz targets and the code they drive (`make fuzz`)"
    ),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    // 4.x: imports only FoundationEssentials (3.x drags in full Foundation and ICU).
    .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    // Already in the graph through swift-crypto's CryptoExtras; named for TPMKeys' key file.
    .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
    // X.509 path validation of EK certificates (TPMAttestation only).
    .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
  ],
  targets: [
    // The commands: everything `fr-profile` does, behind its one-line main (Sources/fr-profile).
    .target(
      name: "FRProfileCommands",
      dependencies: [
        "Collectors",
        "DeviceBinding",
        "DeviceFacts",
        "DeviceIdentity",
        "Posture",
        "Journey",
        "JourneyProfiler",
        "JourneyHTTP",
        "Login",
        "OAuthTokens",
        "TPMAttestation",
        "TPMKeys",
        "TPMProtocol",
        "ProfileCLI",
        "ProfileJSON",
        "DeviceMatch",
        "SystemCalls",
        "CStartup",
        "CQREncode",
        "CFIDO2",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
      ]
    ),
    .executableTarget(
      name: "fr-profile",
      dependencies: ["FRProfileCommands"],
      // `make release` (trait SymbolOrdering): how the shipped binary is linked (the Makefile's
      // RELEASE_FLAGS says why each): the Swift runtime linked in, libstdc++ and libgcc too
      // (the linker script the Makefile writes in .build-release/stdcxx), no PIE, no exported
      // symbols, the commit object, and lld with the functions and data collect touches next
      // to each other (bench/README.md). The C runtime stays dynamic. Linker settings of this
      // target alone, not command-line flags: `make test` compiles the suite with the same
      // command line in the same scratch path, so the tests share every object with the
      // shipped binary (docs/development.md "One build").
      linkerSettings: [
        .unsafeFlags(
          [
            // The static FoundationEssentials needs _FoundationCollections and _FoundationCShims, which a module compiled
            // against the shared runtime does not autolink (--static-swift-stdlib compiled every
            // module against swift_static, and so kept the tests from importing Testing).
            "-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims",
            "-Xclang-linker", "-static-libgcc", "-Xclang-linker", "-no-pie",
            "-L\(Context.packageDirectory)/.build-release/stdcxx",
            "-Xlinker", "\(Context.packageDirectory)/.build-release/build-commit.o", "-Xlinker", "--no-export-dynamic",
            "-use-ld=lld",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/bench/collect-order.txt",
            "-Xlinker", "--no-warn-symbol-ordering",
            // Each segment at a file offset equal to its address modulo 2 MiB (segments padded to a
            // page in the file, not shifted by one page each in memory), so the page cache's folios
            // and the kernel's 64 KiB fault-around windows line up: fewer pages mapped that collect
            // never touches. The base is one of the equally aligned ones, the one whose addresses
            // cost collect the fewest instructions in the runtime's pointer-keyed metadata caches
            // (bench/README.md "Peak RSS").
            "-Xlinker", "-z", "-Xlinker", "separate-loadable-segments", "-Xlinker", "--image-base=0x800000",
          ],
          .when(configuration: .release, traits: ["SymbolOrdering"])
        )
      ]
    ),
    // fr-profile with the CLI tests' seams (PAM services, the policy root) set from the
    // environment: built with the tests, never installed (Tests/Seams/main.swift).
    .executableTarget(
      name: "fr-profile-seams", dependencies: ["FRProfileCommands", "SoftFIDO2"], path: "Tests/Seams", swiftSettings: testCode),
    // A software CTAP2 security key that the real libfido2 drives through its own device seam
    // (fido_dev_set_io_functions, fido_dev_set_transport_functions): the tests' security keys,
    // in fr-profile-seams and SoftFIDO2Tests. Never in fr-profile.
    .target(
      name: "SoftFIDO2",
      dependencies: [
        "CFIDO2", "ProfileJSON", "SystemCalls", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ],
      path: "Tests/SoftFIDO2", swiftSettings: testCode),
    // libfido2's verifiers (fido_cred_verify_self, fido_assert_verify), linked directly: test-only.
    .target(name: "CSoftFIDO2Verify", path: "Tests/CSoftFIDO2Verify", linkerSettings: [.linkedLibrary("fido2")]),
    .testTarget(
      name: "SoftFIDO2Tests",
      dependencies: ["SoftFIDO2", "CFIDO2", "CSoftFIDO2Verify", "TestSupport", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: testCode),
    // Process start-up of the release executable: CommandLine.arguments without the Swift
    // runtime's /proc/self/maps search (Sources/CStartup/swift-argv.c). C, for the ELF constructor.
    .target(name: "CStartup"),
    // What the commands share: the profile option group, failures and exit codes, output.
    .target(
      name: "ProfileCLI",
      dependencies: [
        "CBuildInfo", "Collectors", "DeviceIdentity", "Journey", "ProfileJSON", "SystemCalls",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // The commit the release binaries were built from (a weak symbol the Makefile defines).
    .target(name: "CBuildInfo"),
    // HTTPS POST over the system libcurl: verified TLS, a CA file, timeouts. No Foundation.
    .target(name: "JourneyHTTP", dependencies: ["CCurl"]),
    // libcurl, loaded with dlopen on first use rather than linked (Sources/CCurl/include/CCurl.h).
    // Building needs curl/curl.h (Debian libcurl4-openssl-dev); running journey needs libcurl.so.4.
    .target(name: "CCurl", dependencies: ["CLoader"]),
    // The device profile: collectors over a root-relative system source, tamper score.
    .target(
      name: "Collectors",
      dependencies: [
        "CUdev",
        "DeviceFacts",
        "ProfileJSON",
        "SystemCalls",
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      swiftSettings: fuzzed
    ),
    // The device's security posture (docs/posture.md): facts read from files without root,
    // each true, false or unknown with its reason. `fr-profile posture` and the signing path's
    // `--posture` use it; collect never does (the profile must not change with posture).
    .target(name: "Posture", dependencies: ["ProfileJSON", "SystemCalls"]),
    .testTarget(
      name: "PostureTests", dependencies: ["Posture", "ProfileJSON", "SystemCalls", "TestSupport"], exclude: ["Fixtures"],
      swiftSettings: testCode),
    // The device's identity: the state directory (walked and held by a descriptor), the device
    // key (a file or a TPM key) and the identifier derived from it. Not a collector: the
    // profile, binding and attestation all use it.
    .target(
      name: "DeviceIdentity",
      dependencies: ["ProfileJSON", "StateStore", "SystemCalls", "TPMProtocol", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: fuzzed
    ),
    .testTarget(
      name: "DeviceIdentityTests", dependencies: ["DeviceIdentity", "StateStore", "SystemCalls", "TestSupport"], swiftSettings: testCode),
    // libudev (displays, cameras, bluetooth), loaded with dlopen on first use rather than linked
    // (Sources/CUdev/include/CUdev.h says why); only Collectors/System/Udev.swift imports it.
    // Building needs libudev.h (Debian libudev-dev); running needs libudev.so.1 (libudev1).
    .target(name: "StateStore", dependencies: ["SystemCalls"]),
    .target(name: "DeviceFacts", dependencies: ["ProfileJSON", "SystemCalls"], swiftSettings: fuzzed),
    .target(name: "CUdev", dependencies: ["CLoader"]),
    // libqrencode (a QR code of an MFA registration URI in `journey`), loaded with dlopen when
    // one is shown (Sources/CQREncode/include/CQREncode.h). Building needs libqrencode-dev.
    .target(name: "CQREncode", dependencies: ["CLoader"]),
    // libfido2, dlopened when a journey meets a WebAuthn node; nothing else maps it
    // (Sources/CFIDO2/include/CFIDO2.h). Building needs libfido2-dev.
    .target(name: "CFIDO2", dependencies: ["CLoader"]),
    // The dlopen/dlsym routine the four loaders (CUdev, CCurl, CPAM, CTSS2) share: one set of
    // flags (RTLD_NOW | RTLD_LOCAL) and one wording of "cannot be loaded".
    .target(name: "CLoader"),
    // AM's authenticate protocol for journey clients: steps, callbacks, the walk, server text
    // made printable. Only the JSON value and SystemCalls' clock: an embedder who needs the
    // protocol pulls no libudev or swift-crypto.
    .target(name: "Journey", dependencies: ["ProfileJSON", "SystemCalls"], swiftSettings: fuzzed),
    // OAuth 2.0 / OpenID Connect after a journey (issue 27): the authorization code flow with
    // PKCE from the SSO token, ID token verification against the realm's JWKS, refresh under a
    // lock, revocation, AM's session logout, and the 0600 token store. The transport is the
    // embedder's (the command line passes JourneyHTTP's libcurl client): no HTTP stack here.
    .target(
      name: "OAuthTokens",
      dependencies: [
        "Journey", "ProfileJSON", "StateStore", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ]),
    .testTarget(
      name: "OAuthTokensTests",
      dependencies: ["OAuthTokens", "ProfileJSON", "TestSupport"], exclude: ["make-id-tokens.py"], swiftSettings: testCode),
    // The login as a use case: a journey walked with its answers from answer sources (values
    // given up front, an answers file, a program's callbacks) and a conversation (a terminal, a
    // PAM conversation), the device's callbacks through device steps the caller gives, and the
    // session traded for tokens. `journey`, `token` and the PAM helper run it; no collectors.
    .target(name: "Login", dependencies: ["Journey", "JourneyHTTP", "OAuthTokens", "ProfileJSON", "SystemCalls"]),
    .testTarget(
      name: "LoginTests", dependencies: ["Login", "Journey", "JourneyHTTP", "OAuthTokens", "ProfileJSON", "SystemCalls", "TestSupport"],
      swiftSettings: testCode),
    // Answers DeviceProfileCallback from the collectors (DeviceProfiler): the glue between the
    // protocol and Collectors. Collection knows nothing of AM.
    .target(
      name: "JourneyProfiler", dependencies: ["Journey", "Collectors", "DeviceFacts", "DeviceIdentity", "ProfileJSON"],
      swiftSettings: fuzzed),
    // Device binding and signing (AM's Device Binding / Device Signing Verifier nodes): bound
    // user keys behind UserKeyStore, ES256 JWS over swift-crypto (JWS.swift), PIN protection (scrypt), app
    // policies, PAM user verification. Never on collect's path.
    .target(
      name: "DeviceBinding",
      dependencies: [
        "CHardening",
        "DeviceFacts",
        "DeviceIdentity",
        "CPAM",
        "Journey",
        "ProfileJSON",
        "SystemCalls",
        "TPMProtocol",
        "TPMKeys",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ]
    ),
    // prctl(PR_SET_DUMPABLE, 0) and RLIMIT_CORE 0 before a PIN or key enters memory: prctl is
    // variadic, which Swift cannot call.
    .target(name: "CHardening"),
    // libpam (user verification for BIOMETRIC_* keys); only DeviceBinding/PAM.swift imports it.
    // Loaded with dlopen on first use (Sources/CPAM/include/CPAM.h). Building needs libpam0g-dev.
    .target(name: "CPAM", dependencies: ["CLoader"]),
    .testTarget(
      name: "DeviceBindingTests",
      dependencies: [
        "DeviceBinding", "Journey", "JourneyProfiler", "Collectors", "DeviceIdentity", "ProfileJSON", "SystemCalls", "TPMKeys",
        "TPMProtocol",
        "TestSupport",
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      exclude: ["Fixtures"], swiftSettings: testCode),
    // Keys inside a TPM 2.0 (P-256 signing keys under the storage primary key) over tpm2-tss
    // ESAPI, loaded with dlopen (Sources/CTSS2): collect never loads libtss2.
    .target(
      name: "TPMKeys",
      dependencies: [
        "CTSS2", "DeviceIdentity", "ProfileJSON", "StateStore", "SystemCalls", "TPMProtocol",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
      ]),
    // tpm2-tss (ESAPI, TCTI loader, marshalling, response codes); only TPMKeys/TPMContext.swift imports it.
    // Loaded with dlopen on first use (Sources/CTSS2/include/CTSS2.h). Building needs libtss2-dev.
    .target(name: "CTSS2", dependencies: ["CLoader"]),
    // The verifier of TPM evidence (issue 21): credential challenges (MakeCredential in
    // software) and TPM2_Certify checks. Pure Swift over swift-crypto, no tpm2-tss: a server
    // links it without a TPM stack.
    // What the device client and the verifier share: TPM 2.0 structures as the TPM marshals
    // them (TPMT_PUBLIC, TPMS_ATTEST, our key file) with the one parser of them, and the
    // attestation protocol's documents, callback ids, claim name and errors. Pure Swift.
    .target(name: "TPMProtocol", dependencies: ["ProfileJSON", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: fuzzed),
    .target(
      name: "TPMAttestation",
      dependencies: [
        "ProfileJSON",
        "TPMProtocol",
        .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
      ], swiftSettings: fuzzed),
    .testTarget(
      name: "TPMAttestationTests",
      dependencies: [
        "TPMAttestation", "TPMKeys", "TPMProtocol", "TestSupport", "ProfileJSON", .product(name: "X509", package: "swift-certificates"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ],
      exclude: ["Fixtures"], swiftSettings: testCode),
    // Against a real TPM protocol: swtpm started by the tests on a loopback port.
    .testTarget(
      name: "TPMKeysTests",
      dependencies: ["TPMKeys", "TPMProtocol", "TestSupport", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: testCode),
    // What the tests of several targets share (test targets cannot share sources): the swtpm launcher,
    // processes, threads, and firmware event logs built in code (BuiltLog).
    .target(
      name: "TestSupport", dependencies: [.product(name: "Crypto", package: "swift-crypto")], path: "Tests/TestSupport",
      swiftSettings: testCode),
    // The JSON value shared by collection (output) and matching (JavaScript semantics).
    .target(name: "ProfileJSON", swiftSettings: fuzzed),
    // The one funnel for system calls on secrets and outputs (EINTR, typed errno, the call's
    // name), the read loop and the atomic writer; shared by modules that do not otherwise depend
    // on each other (DeviceMatch must not depend on Collectors).
    .target(name: "SystemCalls", swiftSettings: fuzzed),
    .testTarget(name: "SystemCallsTests", dependencies: ["SystemCalls"], swiftSettings: testCode),
    .testTarget(name: "ProfileJSONTests", dependencies: ["ProfileJSON"], swiftSettings: testCode),
    .testTarget(
      name: "CollectorsTests",
      dependencies: ["Collectors", "DeviceFacts", "DeviceIdentity", "StateStore", "ProfileJSON", "SystemCalls", "TestSupport"],
      exclude: ["Fixtures"], swiftSettings: testCode),
    .testTarget(
      name: "JourneyTests",
      dependencies: ["Journey", "JourneyProfiler", "Collectors", "DeviceFacts", "DeviceIdentity", "ProfileJSON", "SystemCalls"],
      exclude: ["Fixtures"], swiftSettings: testCode),
    // The executable's own logic (the collect fast path against ArgumentParser).
    .testTarget(name: "FRProfileTests", dependencies: ["FRProfileCommands", "ProfileCLI"], swiftSettings: testCode),
    // The device-match script's semantics (src/metadata.js, src/location.js, src/index.js).
    .target(name: "DeviceMatch", dependencies: ["ProfileJSON", "SystemCalls"], swiftSettings: fuzzed),
    .testTarget(name: "DeviceMatchTests", dependencies: ["DeviceMatch", "ProfileJSON", "TestSupport"], swiftSettings: testCode),
    // Runs the built binary as a subprocess and checks stdout, stderr and exit codes; also
    // runs `fr-profile journey` against an in-process AM test server
    // (Support/AuthenticateServer.swift, Device Match by DeviceMatch), TLS through the
    // system OpenSSL.
    .testTarget(
      name: "CLITests",
      dependencies: [
        "ProfileJSON", "DeviceMatch", "COpenSSL", "TestSupport", "TPMKeys", "TPMAttestation", "TPMProtocol", "SoftFIDO2",
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      exclude: [
        "Fixtures", "Support/pty-drive.py", "Support/oauth-am.py", "Support/oauth-am-selftest.sh", "Support/ssh-kbdint.py",
        "Support/webauthn-am.py", "Support/webauthn-am-selftest.py",
      ],
      swiftSettings: testCode),
    .systemLibrary(
      name: "COpenSSL", path: "Tests/COpenSSL", pkgConfig: "openssl",
      providers: [.apt(["libssl-dev"])]
    ),
    // In-process libFuzzer targets (docs/development.md "Fuzzing", `make fuzz`). Built as usual they replay
    // the files they are given (the seed corpus, past crashes) in `make test`; built with
    // the trait Fuzzing (-sanitize=fuzzer,address), libFuzzer drives them.
    .target(name: "FuzzDriver", path: "Fuzz/Driver"),
    .target(
      name: "FuzzSupport", dependencies: ["FuzzDriver"], path: "Fuzz/Support",
      swiftSettings: fuzzed),
    fuzzTarget("fuzz-json", ["ProfileJSON"], "JSON"),
    fuzzTarget("fuzz-replay", ["DeviceMatch", "ProfileJSON"], "Replay"),
    fuzzTarget("fuzz-stored-reader", ["DeviceMatch", "ProfileJSON"], "StoredReader"),
    fuzzTarget("fuzz-device-matcher", ["DeviceMatch", "ProfileJSON"], "DeviceMatcher"),
    fuzzTarget("fuzz-journey-step", ["Journey", "ProfileJSON"], "JourneyStep"),
    fuzzTarget("fuzz-tpm-wire", ["TPMProtocol", "ProfileJSON"], "TPMWire"),
    fuzzTarget("fuzz-event-log", ["TPMAttestation", "TPMProtocol"], "EventLog"),
    fuzzTarget("fuzz-callback-answerer", ["Collectors", "Journey", "JourneyProfiler", "ProfileJSON", "SystemCalls"], "CallbackAnswerer"),
  ]
)
