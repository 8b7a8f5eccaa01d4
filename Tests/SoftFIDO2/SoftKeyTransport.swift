import CFIDO2
import Glibc
import Synchronization

// The software key behind libfido2's seam for devices it does not drive itself:
// `fido_dev_set_io_functions` + `fido_dev_set_transport_functions` (libfido2 1.12, src/dev.c,
// src/io.c). With transport functions set, libfido2 does no CTAPHID framing: `fido_tx` hands
// `tx` a whole message (command, payload) and `fido_rx` asks `rx` for a whole reply into a
// buffer of `count` bytes, waiting at most `ms` milliseconds (-1: no limit, the default of
// fido_dev_set_timeout). A negative return from `rx` is a failed read, which every libfido2
// call reports as FIDO_ERR_RX: that is what a timeout comes to, as with a real key whose HID
// read times out. Keepalives are a framing matter, so none are sent. `io.open` is still called
// with the path (its result is the handle `fido_dev_io_handle` returns) and `io.close` at
// fido_dev_close; `io.read`/`io.write` are never called once transport functions are set, but
// libfido2 refuses NULL ones.
//
// fido_dev_open sends CTAPHID_INIT with an 8-byte nonce and expects 17 bytes back: the nonce, a
// 4-byte channel id, CTAPHID protocol version 2, major, minor and build version, and capability
// flags; FIDO_CAP_CBOR (0x04) makes it a FIDO2 device (it then sends authenticatorGetInfo),
// FIDO_CAP_NMSG (0x08) says there is no U2F. fido_dev_cancel sends CTAPHID_CANCEL (0x11) with no
// payload, from any thread, while another may be waiting in `rx`.

/// The keys the `io.open` callback can find, by path. C callbacks capture nothing, so attaching a
/// key registers it here.
let attachedKeys = Mutex<[String: SoftAuthenticator]>([:])

enum CTAPHID {
  static let ping: UInt8 = 0x01
  static let initialize: UInt8 = 0x06
  static let cbor: UInt8 = 0x10
  static let cancel: UInt8 = 0x11
  /// CTAPHID_INIT's capabilities: CBOR, no U2F messages.
  static let capabilities: UInt8 = 0x04 | 0x08
}

extension SoftAuthenticator {
  /// Makes `dev` (a new, unopened `fido_dev_t *`) talk to this key: sets libfido2's I/O and
  /// transport functions. `fido_dev_open(dev, path)` with this key's ``path`` then opens it.
  /// Returns a libfido2 status (FIDO_OK, 0, on success), as `TestSecurityKey.attach` must.
  public func attach(_ dev: OpaquePointer) -> Int32 {
    guard let api = frp_fido2_load(nil) else { return -1 }  // FIDO_ERR_INTERNAL
    attachedKeys.withLock { $0[path] = self }
    var io = fido_dev_io_t(open: softOpen, close: softClose, read: softRead, write: softWrite)
    var transport = fido_dev_transport_t(rx: softReceive, tx: softTransmit)
    let status = api.pointee.fido_dev_set_io_functions(dev, &io)
    guard status == 0 else { return status }
    return api.pointee.fido_dev_set_transport_functions(dev, &transport)
  }
}

/// One opened device: the reply waiting for `rx`, or the request waiting for a touch.
final class SoftConnection: Sendable {
  let key: SoftAuthenticator
  let exchange = Mutex(Exchange())

  struct Exchange: Sendable {
    var reply: [UInt8]?
    var waiting: Waiting?
  }

  struct Waiting: Sendable {
    var complete: @Sendable () -> [UInt8]
    var since: Double
    var cancelled = false
  }

  init(key: SoftAuthenticator) { self.key = key }

  func transmit(_ command: UInt8, _ payload: [UInt8]) -> Int32 {
    switch command {
    case CTAPHID.initialize:
      guard payload.count == 8 else { return -1 }
      let reply = payload + [0x53, 0x4B, 0x45, 0x59] + [2, 1, 0, 0, CTAPHID.capabilities]
      exchange.withLock { $0 = Exchange(reply: reply) }
    case CTAPHID.ping:
      exchange.withLock { $0 = Exchange(reply: payload) }
    case CTAPHID.cancel:
      exchange.withLock { $0.waiting?.cancelled = true }
    case CTAPHID.cbor:
      switch key.handle(payload) {
      case .reply(let reply): exchange.withLock { $0 = Exchange(reply: reply) }
      case .afterTouch(let complete):
        if key.state.touch == .immediate {
          let reply = complete()
          exchange.withLock { $0 = Exchange(reply: reply) }
        } else {
          exchange.withLock { $0 = Exchange(waiting: Waiting(complete: complete, since: monotonicMilliseconds())) }
        }
      }
    default:
      return -1
    }
    return 0
  }

  /// The reply, once there is one: a request waiting for a touch answers
  /// CTAP2_ERR_KEEPALIVE_CANCEL after CTAPHID_CANCEL and CTAP2_ERR_USER_ACTION_TIMEOUT after
  /// the state's userActionTimeoutMs (a real key's ~30 s); `nil` when `ms` runs out first or
  /// nothing was asked.
  func receive(waitingAtMost ms: Int32) -> [UInt8]? {
    let start = monotonicMilliseconds()
    let userActionTimeout = Double(key.state.userActionTimeoutMs)
    while true {
      let (reply, pending): ([UInt8]?, Bool) = exchange.withLock { exchange in
        if let reply = exchange.reply {
          exchange.reply = nil
          return (reply, false)
        }
        guard let waiting = exchange.waiting else { return (nil, false) }
        if waiting.cancelled {
          exchange.waiting = nil
          return ([CTAPStatus.keepaliveCancel], false)
        }
        if monotonicMilliseconds() - waiting.since >= userActionTimeout {
          exchange.waiting = nil
          return ([CTAPStatus.userActionTimeout], false)
        }
        return (nil, true)
      }
      if reply != nil || !pending { return reply }
      if ms >= 0 && monotonicMilliseconds() - start >= Double(ms) { return nil }
      usleep(2_000)
    }
  }
}

func monotonicMilliseconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
}

func connection(of dev: OpaquePointer?) -> SoftConnection? {
  guard let dev, let api = frp_fido2_load(nil), let handle = api.pointee.fido_dev_io_handle(dev) else { return nil }
  return Unmanaged<SoftConnection>.fromOpaque(handle).takeUnretainedValue()
}

let softOpen: @convention(c) (UnsafePointer<CChar>?) -> UnsafeMutableRawPointer? = { path in
  guard let path, let key = attachedKeys.withLock({ $0[String(cString: path)] }) else { return nil }
  guard (try? key.reload()) != nil else { return nil }
  return Unmanaged.passRetained(SoftConnection(key: key)).toOpaque()
}

let softClose: @convention(c) (UnsafeMutableRawPointer?) -> Void = { handle in
  if let handle { Unmanaged<SoftConnection>.fromOpaque(handle).release() }
}

let softRead: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int, Int32) -> Int32 = { _, _, _, _ in -1 }
let softWrite: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int) -> Int32 = { _, _, _ in -1 }

let softTransmit: @convention(c) (OpaquePointer?, UInt8, UnsafePointer<UInt8>?, Int) -> Int32 = { dev, command, buffer, count in
  guard let connection = connection(of: dev) else { return -1 }
  let payload = buffer.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
  return connection.transmit(command, payload)
}

let softReceive: @convention(c) (OpaquePointer?, UInt8, UnsafeMutablePointer<UInt8>?, Int, Int32) -> Int32 = {
  dev, _, buffer, count, ms in
  guard let connection = connection(of: dev), let buffer, let reply = connection.receive(waitingAtMost: ms),
    reply.count <= count
  else { return -1 }
  buffer.update(from: reply, count: reply.count)
  return Int32(reply.count)
}
