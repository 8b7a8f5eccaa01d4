/// Running in a virtual machine or a container. Score 0.5.
///
/// The SDKs score an emulator at the maximum because a phone app in an emulator is never the
/// user's real phone. On Linux, VMs and containers are a normal home for legitimate clients
/// (cloud servers, CI runners, kiosks on hypervisors), so 1 would mark every cloud machine as
/// tampered. But their disks, the device key included, can be snapshotted and cloned, so "the
/// same device as last time" is weaker evidence there: 0.5 lets an AM administrator allow them
/// (`jailBreakScore <= 0.5`) or demand bare metal (`< 0.5`) with one threshold.
public struct VirtualizationDetector: TamperDetector {
  public let name = "virtualization"
  public init() {}

  public func analyze(_ context: TamperContext) -> TamperFinding {
    switch context.facts.virtualization {
    case .none: .clean
    case .container(let technology, let evidence):
      TamperFinding(score: 0.5, evidence: ["container (\(technology)): \(evidence)"])
    case .vm(let technology, let evidence):
      TamperFinding(score: 0.5, evidence: ["virtual machine (\(technology)): \(evidence)"])
    }
  }
}
