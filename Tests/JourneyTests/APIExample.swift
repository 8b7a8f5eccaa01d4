// API-EXAMPLE-BEGIN
import Collectors
import DeviceFacts
import DeviceIdentity
import Journey
import JourneyProfiler
import ProfileJSON
import SystemCalls

/// A collector of your own: its section appears in the metadata under "kiosk".
struct KioskCollector: DeviceCollector {
  let name = "kiosk"
  func collect(_ context: CollectionContext) -> JSON? {
    ["terminal": .string(context.system.readLine("/etc/kiosk-id") ?? "unknown")]
  }
}

/// A tamper check of your own: scores 1 when a debug marker file exists.
struct DebugMarkerDetector: TamperDetector {
  let name = "debugMarker"
  func analyze(_ context: TamperContext) -> TamperFinding {
    context.system.status("/etc/kiosk-debug") == nil
      ? .clean : TamperFinding(score: 1, evidence: ["/etc/kiosk-debug exists"])
  }
}

/// Answers the DeviceProfileCallbacks of one /authenticate response; returns the body to POST back.
func answerDeviceProfile(response: [UInt8], keys: DeviceKeyStore, system: SystemSource = .live()) throws -> String {
  var collectors = DeviceProfile.defaultCollectors()
  collectors[0] = PlatformCollector(detectors: TamperScore.defaultDetectors + [DebugMarkerDetector()])
  collectors.append(KioskCollector())
  let profiler = DeviceProfiler(collectors: collectors, system: system, identifier: { try keys.identifier(for: system) })
  var step = try AuthenticateStep(parsing: response)
  let requests = try profiler.answer(&step)
  for request in requests where !request.message.isEmpty { print(request.message) }
  return step.text
}
// API-EXAMPLE-END
