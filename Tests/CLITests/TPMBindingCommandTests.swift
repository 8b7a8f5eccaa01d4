import Crypto
import Foundation
import ProfileJSON
import TPMKeys
import TPMProtocol
import TestSupport
import Testing

/// `fr-profile journey` binding and signing through a TPM (swtpm on loopback, one per test)
/// against the loopback AM server.
extension BindingCommandTests {
  @Test(arguments: ["NONE", "APPLICATION_PIN"])
  func bindThenSignInTheTPM(type: String) throws {
    try withSWTPM { tpm in
      try withDevice { device in
        try withServer({ $0.authenticationType = type }) { server, tree in
          let options = ["--pin-file", try device.pinFile("271828"), "--key-store", "tpm", "--tcti", tpm.tcti]
          let bound = try journey(server, device, tree: "Bind", options)
          #expect(bound.status == 0, "\(bound.stderr)")
          let records = try keyList(device)
          #expect(records.count == 1 && records.first?["store"]?.stringValue == "tpm")
          // Only the TPM-wrapped blob is on disk: no "d", no "sealed".
          let kid = try #require(records.first?["kid"]?.stringValue)
          let text = try String(contentsOfFile: device.state + "/bound-keys/\(kid).json", encoding: .utf8)
          let key = try JSONParser.parse(Array(text.utf8))["key"]
          #expect(key?["protection"] == "hardware" && key?["d"] == nil && key?["sealed"] == nil)
          // Signing needs no --key-store: the key says where it lives.
          let signed = try journey(server, device, tree: "Sign", ["--pin-file", try device.pinFile("271828"), "--tcti", tpm.tcti])
          #expect(signed.status == 0, "\(signed.stderr)")
          #expect(tree.outcomes == ["binding: success", "signing: success"])
        }
      }
    }
  }

  @Test func stateDirectoryMovedToAnotherTPMFailsWithExit81() throws {
    try withSWTPM { tpm in
      try withSWTPM { other in
        try withDevice { device in
          try withServer { server, tree in
            #expect(try journey(server, device, tree: "Bind", ["--key-store", "tpm", "--tcti", tpm.tcti]).status == 0)
            let moved = try journey(server, device, tree: "Sign", ["--tcti", other.tcti])
            #expect(moved.status == 81, "\(moved.stderr)")
            #expect(moved.stderr.contains("another TPM") && moved.stderr.contains("bind this device again"))
            #expect(!tree.outcomes.contains("signing: success"))
            // Nothing was re-made: the one key is still the TPM's.
            #expect(try keyList(device).map { $0["store"]?.stringValue } == ["tpm"])
          }
        }
      }
    }
  }

  @Test func keyStoreTPMWithoutATPMIsExit80AndAutoFallsBackToFiles() throws {
    try withDevice { device in
      try withServer { (server: AuthenticateServer, _: BindingServer) throws in
        let missing = try journey(server, device, tree: "Bind", ["--key-store", "tpm", "--tcti", "device:/nonexistent/tpmrm0"])
        #expect(missing.status == 80, "\(missing.stderr)")
        #expect(missing.stderr.contains("no usable TPM at device:/nonexistent/tpmrm0"))
        let auto = try journey(server, device, tree: "Bind", ["--key-store", "auto", "--tcti", "device:/nonexistent/tpmrm0"])
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(try keyList(device).map { $0["store"]?.stringValue } == ["file"])
      }
    }
  }

  @Test func autoWithATPMUsesIt() throws {
    try withSWTPM { tpm in
      try withDevice { device in
        try withServer { (server: AuthenticateServer, _: BindingServer) throws in
          #expect(try journey(server, device, tree: "Bind", ["--tcti", tpm.tcti]).status == 0)
          #expect(try keyList(device).map { $0["store"]?.stringValue } == ["tpm"])
        }
      }
    }
  }

  @Test func tpmGoneMidRunIsExit80AndTheKeyStaysInTheTPM() throws {
    try withSWTPM { tpm in
      try withDevice { device in
        try withServer { (server: AuthenticateServer, _: BindingServer) throws in
          #expect(try journey(server, device, tree: "Bind", ["--key-store", "tpm", "--tcti", tpm.tcti]).status == 0)
          tpm.kill9()
          let gone = try journey(server, device, tree: "Sign", ["--tcti", tpm.tcti])
          #expect(gone.status == 80, "\(gone.stderr)")
          #expect(try keyList(device).map { $0["store"]?.stringValue } == ["tpm"])
        }
      }
    }
  }
}

/// The TPM under attack or under load: a TPM that stops answering, a TCTI that is a
/// library path, a TPM this user may not open.
extension BindingCommandTests {
  @Test("a TPM that stops answering mid-journey ends it at --max-time with 75")
  func aStalledTPMEndsAtMaxTime() throws {
    try withSWTPM { tpm in
      try withDevice { device in
        try withServer { server, _ in
          let bound = try journey(server, device, tree: "Bind", ["--key-store", "tpm", "--tcti", tpm.tcti])
          #expect(bound.status == 0, "\(bound.stderr)")
          #expect(kill(tpm.pid, SIGSTOP) == 0)
          let started = Date()
          let stalled = try journey(server, device, tree: "Sign", ["--tcti", tpm.tcti, "--max-time", "3"])
          let took = Date().timeIntervalSince(started)
          #expect(stalled.status == 75, "\(stalled.stderr)")
          #expect(stalled.stderr.contains("did not end within --max-time (3 s)"), "\(stalled.stderr)")
          #expect(took < 10, "took \(took) s")
        }
      }
    }
  }

  @Test("FR_PROFILE_TCTI naming a library is refused (78) and the library is never loaded")
  func aTCTILibraryPathIsNeverLoaded() throws {
    try withDevice { device in
      let source = device.directory + "/tcti.c"
      let marker = device.directory + "/loaded"
      try """
      #include <stdio.h>
      __attribute__((constructor)) static void planted(void) { FILE *f = fopen("\(marker)", "w"); if (f) fclose(f); }
      """.write(toFile: source, atomically: true, encoding: .utf8)
      let library = device.directory + "/libtss2-tcti-planted.so"
      let built = try run(["-shared", "-fPIC", "-o", library, source], executable: "/usr/bin/gcc")
      #expect(built.status == 0, "\(built.stderr)")
      try withServer { server, tree in
        for value in [library, "cmd:touch \(marker)"] {
          var environment = device.environment
          environment["FR_PROFILE_TCTI"] = value
          let result = try run(
            ["journey", "--server", server.url, "--realm", "alpha", "--tree", "Bind", "--user", "demo", "--password-stdin"]
              + device.arguments, environment: environment, stdin: password + "\n", prefix: ["/usr/bin/setsid", "-w"])
          #expect(result.status == 78, "\(value): \(result.stderr)")
          #expect(result.stderr.contains("FR_PROFILE_TCTI=\(value) is not a TPM interface"), "\(result.stderr)")
          #expect(!FileManager.default.fileExists(atPath: marker), "\(value) was loaded")
        }
        #expect(!tree.outcomes.contains("binding: success"))
      }
    }
  }

  @Test(
    "auto with a TPM device this user cannot open makes a file key and says why (the tss group)",
    .enabled(if: canDropPrivileges, "needs root to run the binding as nobody"))
  func autoSaysWhyItMadeAFileKey() throws {
    try withDevice { device in
      try withServer { server, _ in
        // A stand-in for /dev/tpmrm0 that nobody may not open (root's, 0600).
        let node = device.directory + "/tpmrm0"
        #expect(FileManager.default.createFile(atPath: node, contents: Data()) && chmod(node, 0o600) == 0)
        let home = nobodyHome(device)
        let bound = try bindAsNobody(server, device, home: home, ["--key-store", "auto", "--tcti", "device:" + node])
        #expect(bound.status == 0, "\(bound.stderr)")
        #expect(bound.stderr.contains("\(node) exists but this user cannot open it (Permission denied)"), "\(bound.stderr)")
        #expect(bound.stderr.contains("tss"))
        let listed = try run(["keys", "list", "--json", "--state-dir", home + "/state"], prefix: asNobody)
        #expect(try JSONParser.parse(Array(listed.stdout.utf8)).arrayValue?.first?["store"]?.stringValue == "file")
        // No device at all: no note.
        let none = try journey(server, device, tree: "Bind", ["--key-store", "auto", "--tcti", "device:/nonexistent/tpmrm0"])
        #expect(none.status == 0 && !none.stderr.contains("cannot open it"), "\(none.stderr)")
      }
    }
  }
}

/// `keys export`: a TPM key in the TSS2 PRIVATE KEY form other TPM software loads.
extension BindingCommandTests {
  @Test(
    "an exported TPM key signs through Debian's tpm2-openssl provider, and the signature verifies with the key fr-profile bound")
  func exportedKeySignsThroughTPM2OpenSSL() throws {
    try withSWTPM { tpm in
      try TPMContext.open(tcti: tpm.tcti).persistStorageKey()
      try withDevice { device in
        try withServer { server, tree in
          #expect(try journey(server, device, tree: "Bind", ["--key-store", "tpm", "--tcti", tpm.tcti]).status == 0)
          let kid = try #require(try keyList(device).first?["kid"]?.stringValue)
          let pem = device.directory + "/key.pem"
          // Nobody's file where the key goes is refused and never gets the key.
          if canDropPrivileges {
            chmod(device.directory, 0o755)  // nobody must reach the shared directory
            let shared = device.directory + "/shared"
            mkdir(shared, 0o1777)
            chmod(shared, 0o1777)
            let made = try run(["-c", "umask 0; : > \(shared)/key.pem"], executable: "/bin/sh", prefix: asNobody)
            #expect(made.status == 0, "\(made.stderr)")
            let refused = try run(["keys", "export", kid, "-o", shared + "/key.pem", "--state-dir", device.state])
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(try String(contentsOfFile: shared + "/key.pem", encoding: .utf8).isEmpty)
          }
          let exported = try run(["keys", "export", kid, "-o", pem, "--state-dir", device.state])
          #expect(exported.status == 0, "\(exported.stderr)")
          #expect(fileMode(pem) == 0o600)
          #expect(try String(contentsOfFile: pem, encoding: .utf8).hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----\n"))
          let message = device.directory + "/message.txt"
          try "challenge to sign".write(toFile: message, atomically: true, encoding: .utf8)
          let signature = device.directory + "/signature.der"
          let signed = try run(
            ["dgst", "-sha256", "-provider", "tpm2", "-provider", "default", "-propquery", "?provider=tpm2"]
              + ["-sign", pem, "-out", signature, message],
            environment: ["TPM2OPENSSL_TCTI": tpm.tcti], executable: "/usr/bin/openssl")
          #expect(signed.status == 0, "\(signed.stderr)")
          let jwk = try #require(tree.boundDevices("demo").first?.jwk)
          let x = try #require(BindingServer.base64URL(jwk["x"]?.stringValue ?? ""))
          let y = try #require(BindingServer.base64URL(jwk["y"]?.stringValue ?? ""))
          let publicKey = try P256.Signing.PublicKey(x963Representation: [0x04] + Array(x) + Array(y))
          let der = try #require(FileManager.default.contents(atPath: signature))
          let parsed = try P256.Signing.ECDSASignature(derRepresentation: der)
          #expect(publicKey.isValidSignature(parsed, for: SHA256.hash(data: Data("challenge to sign".utf8))))
        }
      }
    }
  }

  @Test("a file key, a PIN key and a key under the template SRK are not exported (1), and say why")
  func onlyTPMKeysWithoutAPINAreExported() throws {
    try withSWTPM { tpm in
      try withDevice { device in
        try withServer { server, _ in
          #expect(try journey(server, device, tree: "Bind", ["--key-store", "tpm", "--tcti", tpm.tcti]).status == 0)
          let templated = try #require(try keyList(device).first?["kid"]?.stringValue)
          let noSRK = try run(["keys", "export", templated, "--state-dir", device.state])
          #expect(noSRK.status == 1 && noSRK.stderr.contains("provision the TCG template's SRK"), "\(noSRK.stderr)")
          #expect(try run(["keys", "delete", templated, "--state-dir", device.state]).status == 0)
          #expect(try journey(server, device, tree: "Bind", ["--key-store", "file"]).status == 0)
          let kid = try #require(try keyList(device).first?["kid"]?.stringValue)
          let refused = try run(["keys", "export", kid, "--state-dir", device.state])
          #expect(refused.status == 1 && refused.stderr.contains("is a file key"), "\(refused.stderr)")
          #expect(refused.stdout.isEmpty)
          let missing = try run(["keys", "export", "0d6f2c3e-1b4a-4c5d-8e9f-a0b1c2d3e4f5", "--state-dir", device.state])
          #expect(missing.status == 1 && missing.stderr.contains("no bound key has the kid"))
        }
        try TPMContext.open(tcti: tpm.tcti).persistStorageKey()
        try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
          let options = ["--pin-file", try device.pinFile("271828"), "--key-store", "tpm", "--tcti", tpm.tcti]
          #expect(try journey(server, device, tree: "Bind", options).status == 0)
          let kid = try #require(try keyList(device).first { $0["authType"]?.stringValue == "APPLICATION_PIN" }?["kid"]?.stringValue)
          let pin = try run(["keys", "export", kid, "--state-dir", device.state])
          #expect(pin.status == 1 && pin.stderr.contains("has a PIN") && pin.stdout.isEmpty, "\(pin.stderr)")
        }
      }
    }
  }
}
