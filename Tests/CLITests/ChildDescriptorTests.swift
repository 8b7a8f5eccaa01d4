import Glibc
import TestSupport
import Testing

/// Children of the tests inherit no descriptor but 0, 1 and 2 (`TestProcess.closeInherited`): a
/// TPM connection libtss2 opened without close-on-exec in another test once lived on in a JVM the
/// AM-script tests started, and swtpm, serving one connection at a time, never answered the next.
@Suite struct ChildDescriptorTests {
  @Test("a descriptor without close-on-exec does not reach a child")
  func noDescriptorIsInherited() throws {
    let leaky = open("/dev/null", O_RDONLY)  // no O_CLOEXEC, as libtss2's socket
    #expect(leaky > 2)
    defer { close(leaky) }
    let listing = try TestProcess.run(["/bin/ls", "/proc/self/fd"], environment: [:])
    #expect(listing.status == 0)
    let descriptors = Set(listing.stdout.split(separator: "\n").compactMap { Int32($0) })
    #expect(!descriptors.contains(leaky), "the child holds descriptor \(leaky): \(descriptors.sorted())")
    // ls's own directory descriptor aside, only 0, 1 and 2.
    #expect(descriptors.subtracting([0, 1, 2]).count <= 1, "\(descriptors.sorted())")
  }
}
