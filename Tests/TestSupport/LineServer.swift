import Glibc
import Synchronization

/// A child kept for the whole test process that answers one line for each line it is sent: one
/// JVM serving every AM-script run instead of a JVM a run (a JVM's start costs about a CPU-second
/// here, and the suites run scripts over a hundred times). Requests are serialized. A request
/// that gets no answer within its time limit, or finds the child gone, kills the child's whole
/// process group and throws; the next request starts a new child. Standard error goes to a file
/// whose end the error quotes.
public final class LineServer: Sendable {
  public struct Failure: Error, CustomStringConvertible {
    public let description: String
  }

  private struct Child {
    var pid: pid_t
    var input: Int32
    var output: Int32
    var pending: [UInt8] = []
  }

  private let argv: [String]
  private let environment: [String: String]
  private let errorLog: String
  private let child = Mutex<Child?>(nil)

  /// `errorLog`: the file the child's standard error goes to (truncated at each start).
  public init(_ argv: [String], environment: [String: String], errorLog: String) {
    self.argv = argv
    self.environment = environment
    self.errorLog = errorLog
  }

  /// Sends `line` (without its newline) and returns the child's next line, waiting at most
  /// `timeout` seconds once the request is written.
  public func request(_ line: String, timeout: Double) throws -> String {
    try child.withLock { child in
      if child == nil { child = try start() }
      guard var running = child else { throw Failure(description: "the server did not start") }
      do {
        let answer = try exchange(&running, Array((line + "\n").utf8), timeout: timeout)
        child = running
        return answer
      } catch {
        stop(running)
        child = nil
        throw error
      }
    }
  }

  private func start() throws -> Child {
    // A child that died between requests must fail the write, not end this process.
    signal(SIGPIPE, SIG_IGN)
    var input: [Int32] = [-1, -1]
    var output: [Int32] = [-1, -1]
    guard pipe2(&input, O_CLOEXEC) == 0, pipe2(&output, O_CLOEXEC) == 0 else {
      throw Failure(description: "pipe2: \(String(cString: strerror(errno)))")
    }
    let log = open(errorLog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    defer {
      close(input[0])
      close(output[1])
      if log >= 0 { close(log) }
    }
    guard log >= 0 else {
      close(input[1])
      close(output[0])
      throw Failure(description: "\(errorLog): \(String(cString: strerror(errno)))")
    }
    do {
      let pid = try TestProcess.spawn(argv, environment: environment, directory: nil, stdio: (input[0], output[1], log))
      return Child(pid: pid, input: input[1], output: output[0])
    } catch {
      close(input[1])
      close(output[0])
      throw error
    }
  }

  private func exchange(_ child: inout Child, _ request: [UInt8], timeout: Double) throws -> String {
    var sent = 0
    while sent < request.count {
      let count = request[sent...].withUnsafeBytes { write(child.input, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { throw Failure(description: "the server is gone (\(String(cString: strerror(errno))))\(errorTail())") }
      sent += count
    }
    let deadline = TestProcess.monotonicSeconds() + timeout
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if let end = child.pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: child.pending[..<end], as: UTF8.self)
        child.pending.removeSubrange(...end)
        return line
      }
      let left = deadline - TestProcess.monotonicSeconds()
      guard left > 0 else { throw Failure(description: "no answer within \(Int(timeout)) s; the server was killed") }
      var polled = [pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)]
      let ready = poll(&polled, 1, Int32(min(left, 1) * 1000) + 1)
      if ready < 0 && errno != EINTR { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
      guard ready > 0 else { continue }
      let count = read(child.output, &buffer, buffer.count)
      if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
      guard count > 0 else { throw Failure(description: "the server ended without an answer\(errorTail())") }
      child.pending += buffer[0..<count]
    }
  }

  private func stop(_ child: Child) {
    close(child.input)
    close(child.output)
    kill(-child.pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(child.pid, &status, 0) < 0 && errno == EINTR {}
  }

  /// The last 2,000 bytes of the child's standard error, after ": ", or nothing.
  private func errorTail() -> String {
    guard let file = fopen(errorLog, "r") else { return "" }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = fread(&buffer, 1, buffer.count, file)
      if count <= 0 { break }
      bytes += buffer[0..<count]
    }
    let tail = String(decoding: bytes.suffix(2000), as: UTF8.self)
    return tail.isEmpty ? "" : ": " + tail
  }
}
