import Foundation
import ProfileJSON
import SWTPMSupport
import Testing

/// `fr-profile journey` binding and signing through a TPM (swtpm on loopback, one per test)
/// against the loopback AM server.
extension BindingCommandTests {
  @Test(arguments: ["NONE", "APPLICATION_PIN"])
  func bindThenSignInTheTPM(type: String) throws {
    let tpm = try SWTPM()
    defer {
      tpm.stop()
      tpm.removeState()
    }
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

  @Test func stateDirectoryMovedToAnotherTPMFailsWithExit81() throws {
    let tpm = try SWTPM()
    defer {
      tpm.stop()
      tpm.removeState()
    }
    let other = try SWTPM()
    defer {
      other.stop()
      other.removeState()
    }
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
    let tpm = try SWTPM()
    defer {
      tpm.stop()
      tpm.removeState()
    }
    try withDevice { device in
      try withServer { (server: AuthenticateServer, _: BindingServer) throws in
        #expect(try journey(server, device, tree: "Bind", ["--tcti", tpm.tcti]).status == 0)
        #expect(try keyList(device).map { $0["store"]?.stringValue } == ["tpm"])
      }
    }
  }

  @Test func tpmGoneMidRunIsExit80AndTheKeyStaysInTheTPM() throws {
    let tpm = try SWTPM()
    defer {
      tpm.stop()
      tpm.removeState()
    }
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

/// The TPM under attack or under load (issue 20): a TPM that stops answering, a TCTI that is a
/// library path, a TPM this user may not open.
extension BindingCommandTests {
  @Test("a TPM that stops answering mid-journey ends it at --max-time with 75")
  func aStalledTPMEndsAtMaxTime() throws {
    let tpm = try SWTPM()
    defer {
      kill(tpm.pid, SIGCONT)
      tpm.stop()
      tpm.removeState()
    }
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
        chmod(device.directory, 0o755)
        let home = device.directory + "/nobody"
        #expect(mkdir(home, 0o700) == 0 && chown(home, 65534, 65534) == 0)
        let bound = try run(
          ["journey", "--server", server.url, "--realm", "alpha", "--tree", "Bind", "--user", "demo", "--password-stdin"]
            + ["--state-dir", home + "/state", "--root", device.root, "--key-store", "auto", "--tcti", "device:" + node],
          environment: device.environment, stdin: password + "\n", prefix: asNobody)
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
