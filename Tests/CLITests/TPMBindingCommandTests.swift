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
