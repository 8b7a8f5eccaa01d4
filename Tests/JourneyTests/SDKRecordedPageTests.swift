import Foundation
import Journey
import ProfileJSON
import Testing

/// AM pages recorded in the ForgeRock SDKs' own test resources
/// (Fixtures/sdk-recorded, provenance in its README.md) read as the SDKs read them — AM's quirks
/// the SDKs accept included — and each callback type fr-profile answers is recorded by two SDKs
/// where two record it.
@Suite(.timeLimit(.minutes(10)))
struct SDKRecordedPageTests {
  static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/sdk-recorded")

  /// Every recorded page (`<sdk>/<name>.json`), and every callback from an SDK test's string
  /// (`<sdk>/<name>.callback.json`) as the one callback of a page.
  static func recordedPages() throws -> [(file: String, sdk: String, step: AuthenticateStep)] {
    var pages: [(String, String, AuthenticateStep)] = []
    for sdk in ["android", "ios", "javascript"] {
      let folder = directory.appendingPathComponent(sdk)
      for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where name.hasSuffix(".json") {
        let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
        let parsed = try JSONParser.parse(bytes)
        let step =
          name.hasSuffix(".callback.json")
          ? AuthenticateStep(body: ["authId": "sdk-recorded", "callbacks": [parsed]])
          : try AuthenticateStep(parsing: bytes)
        pages.append(("\(sdk)/\(name)", sdk, step))
      }
    }
    return pages
  }

  /// The callback types recorded by one SDK only (README.md lists them with the reason).
  static let recordedByOneSDK: Set<String> = [
    "ConsentMappingCallback", "DeviceBindingCallback", "PingOneProtectInitializeCallback", "RedirectCallback",
  ]

  @Test("every recorded page reads into typed requests, as the SDKs read it")
  func everyRecordedPageReads() throws {
    let pages = try Self.recordedPages()
    #expect(pages.count >= 60, "the fixtures are missing: \(Self.directory.path)")
    for page in pages {
      #expect(throws: Never.self, "\(page.file)") { try page.step.requests() }
    }
  }

  @Test("each callback type fr-profile answers is recorded by two SDKs, or listed as recorded by one")
  func everyTypeIsRecordedTwice() throws {
    var sdks: [String: Set<String>] = [:]
    for page in try Self.recordedPages() {
      for callback in page.step.callbacks ?? [] { sdks[callback.type ?? "", default: []].insert(page.sdk) }
    }
    for type in CallbackRequest.supportedTypes {
      let count = sdks[type]?.count ?? 0
      if Self.recordedByOneSDK.contains(type) {
        #expect(count == 1, "\(type) is recorded by \(sdks[type] ?? []): update README.md and recordedByOneSDK")
      } else {
        #expect(count >= 2, "\(type) is recorded by \(sdks[type] ?? [])")
      }
    }
  }

  @Test("a null among a ConsentMappingCallback's fields is left out (Android SDK's recorded page)")
  func consentFieldsDropNull() throws {
    let page = try #require(try Self.recordedPages().first { $0.file == "android/consent-mapping.callback.json" })
    let request = try page.step.requests()[0].request
    guard case .consentMapping(let consent) = request else { throw Unexpected(request) }
    #expect(
      consent.fields == [
        "First Name", "Last Name", "Username", "Description", "Email Address", "Password", "Telephone Number",
      ])
  }

  @Test("\"required\": 0 reads as not required (iOS SDK's recorded attribute collector page)")
  func requiredZeroIsFalse() throws {
    let page = try #require(try Self.recordedPages().first { $0.file == "ios/attribute-collectors.json" })
    let requests = try page.step.requests().map(\.request)
    #expect(requests.count == 3)
    for request in requests {
      guard case .attributeInput(let attribute) = request else { throw Unexpected(request) }
      #expect(attribute.kind == .string && !attribute.input.required)
    }
  }

  @Test("quirks beyond those the SDKs accept stay errors: other numbers or text for a flag, other non-strings in fields")
  func otherQuirksStayErrors() {
    func attribute(required: JSON) -> AuthenticateStep {
      AuthenticateStep(body: [
        "callbacks": [
          [
            "type": "StringAttributeInputCallback",
            "output": [["name": "name", "value": "mail"], ["name": "required", "value": required]],
            "input": [["name": "IDToken1", "value": ""]],
          ]
        ]
      ])
    }
    #expect(throws: Never.self) { try attribute(required: 1).requests() }
    for value: JSON in [2, 0.5, "true", "0"] {
      #expect(
        throws: JourneyError.malformedCallback(index: 0, reason: "StringAttributeInputCallback output \"required\" is not a boolean"),
        "\(value)"
      ) { try attribute(required: value).requests() }
    }
    let consent = AuthenticateStep(body: [
      "callbacks": [
        [
          "type": "ConsentMappingCallback", "output": [["name": "fields", "value": ["Email", 7]]],
          "input": [["name": "IDToken1", "value": false]],
        ]
      ]
    ])
    #expect(throws: JourneyError.malformedCallback(index: 0, reason: "ConsentMappingCallback output \"fields\" holds a non-string")) {
      try consent.requests()
    }
  }

  struct Unexpected: Error {
    let request: CallbackRequest
    init(_ request: CallbackRequest) { self.request = request }
  }
}
