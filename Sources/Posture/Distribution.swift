import SystemCalls

/// `distributionId`, `distributionVersion` ← os-release `ID` and `VERSION_ID` (/etc/os-release,
/// else /usr/lib/os-release; os-release(5)), as the distribution wrote them. Rolling releases
/// (Arch, Debian sid) have no VERSION_ID: unknown, said.
struct Distribution {
  let system: SystemSource

  func facts() -> (id: PostureFact, version: PostureFact) {
    let file: String
    let bytes: [UInt8]
    if let etc = system.readBytes("/etc/os-release", limit: 65536) {
      (file, bytes) = ("/etc/os-release", etc)
    } else if let lib = system.readBytes("/usr/lib/os-release", limit: 65536) {
      (file, bytes) = ("/usr/lib/os-release", lib)
    } else {
      let fact = PostureFact.unknown("neither /etc/os-release nor /usr/lib/os-release can be read")
      return (fact, fact)
    }
    let release = parseKeyValueFile(bytes)
    let id = release["ID"].flatMap { $0.isEmpty ? nil : $0 }
    let version = release["VERSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
    return (
      id.map { PostureFact(.string($0), "ID in \(file)") } ?? .unknown("\(file) sets no ID"),
      version.map { PostureFact(.string($0), "VERSION_ID in \(file)") }
        ?? .unknown("\(file) sets no VERSION_ID (a rolling release, or a development one)")
    )
  }
}
