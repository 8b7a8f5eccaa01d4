import Foundation
import Glibc
import TestSupport
import Testing

/// Children of the tests inherit no descriptor but 0, 1 and 2 (`TestProcess.closeInherited`): a
/// TPM connection libtss2 opened without close-on-exec in another test once lived on in a JVM the
/// AM-script tests started, and swtpm, serving one connection at a time, never answered the next.
@Suite struct ChildDescriptorTests {
  /// Judged by what each of the child's descriptors refers to, never by their numbers: the
  /// leaked descriptor's number is whatever was free (3 as often as not), and a lister's own
  /// directory descriptor takes the lowest free one (this test once listed with ls and
  /// failed whenever the leak was 3).
  @Test("a descriptor without close-on-exec does not reach a child")
  func noDescriptorIsInherited() throws {
    let directory = try makeTemporaryDirectory("fr-profile-fd")
    defer { removeTemporaryDirectory(directory) }
    let marker = directory + "/leaked-descriptor"
    let leaky = open(marker, O_RDWR | O_CREAT, 0o600)  // no O_CLOEXEC, as libtss2's socket
    #expect(leaky > 2)
    defer { close(leaky) }
    // ls lists the shell's descriptors from a process of its own (its directory descriptor is
    // its own, not the shell's); `; exit` keeps the shell from becoming ls by exec.
    let listing = try TestProcess.run(["/bin/sh", "-c", "ls -l /proc/$$/fd; exit $?"], environment: [:])
    #expect(listing.status == 0, "\(listing.stderr)")
    // "lrwx------ 1 root root 64 Nov 28 02:30 3 -> /tmp/…/leaked-descriptor"
    let open = listing.stdout.split(separator: "\n").compactMap { line -> (Int32, String)? in
      let sides = line.components(separatedBy: " -> ")
      guard sides.count == 2, let number = sides[0].split(separator: " ").last.flatMap({ Int32($0) }) else { return nil }
      return (number, sides[1])
    }
    #expect(open.contains { $0.0 == 0 }, "\(listing.stdout)")
    #expect(!open.contains { $0.1 == marker }, "the child holds the leaked descriptor: \(listing.stdout)")
    #expect(open.allSatisfy { $0.0 <= 2 }, "the child holds more than 0, 1 and 2: \(listing.stdout)")
  }
}
