// Shared by the fuzz targets: how a target runs without libFuzzer (replaying inputs from
// files, the way `make test` checks the seed corpus and every past crash), and the check
// that turns a broken invariant into a crash libFuzzer records.

import FuzzDriver

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Stops the process with `message` when `condition` is false: the fuzzer's finding.
/// (`precondition` is compiled out of `-Ounchecked` builds; this never is.)
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
  if !condition() {
    let text = "fuzz invariant broken: \(message())\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    abort()
  }
}

/// Runs `body` on every file named in the arguments (a directory: every file in it, sorted)
/// and prints how many ran. Exit 0 unless `body` crashes.
public func replayFiles(_ arguments: [String], name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Int32 {
  var files: [String] = []
  for argument in arguments {
    if let directory = opendir(argument) {
      var names: [String] = []
      while let entry = readdir(directory) {
        let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        if entryName != "." && entryName != ".." && !entryName.hasPrefix(".") { names.append(entryName) }
      }
      closedir(directory)
      files += names.sorted().map { argument + "/" + $0 }
    } else {
      files.append(argument)
    }
  }
  var count = 0
  for file in files {
    guard let handle = fopen(file, "rb") else {
      print("\(name): cannot open \(file)")
      return 66
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let read = fread(&chunk, 1, chunk.count, handle)
      if read <= 0 { break }
      bytes += chunk[0..<read]
    }
    fclose(handle)
    bytes.withUnsafeBufferPointer { body($0) }
    count += 1
  }
  print("\(name): \(count) inputs replayed, no crash")
  return 0
}

/// The body `runTarget` hands to libFuzzer (one per process; libFuzzer calls it from one thread).
nonisolated(unsafe) var fuzzBody: (UnsafeBufferPointer<UInt8>) -> Void = { _ in }

/// A target's `main`. Built with the trait Fuzzing (-sanitize=fuzzer), libFuzzer runs `body`
/// with its own flags and corpus arguments; otherwise each file argument is replayed. (A
/// release build links the executable's own `main`, which comes here; a debug build renames it,
/// and libFuzzer's `main` calls the target's `LLVMFuzzerTestOneInput` instead.)
public func runTarget(name: String, _ body: @escaping (UnsafeBufferPointer<UInt8>) -> Void) -> Never {
  #if Fuzzing
    fuzzBody = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(
      LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzBody(UnsafeBufferPointer(start: data ?? UnsafePointer(bitPattern: 1)!, count: size))
        return 0
      })
  #else
    exit(replayFiles(Array(CommandLine.arguments.dropFirst()), name: name, body))
  #endif
}
