#!/usr/bin/env python3
"""Counts the TPM commands fr-profile sends, through a decoding proxy (bench/README.md "TPM commands").

The proxy sits between tpm2-tss's swtpm TCTI and swtpm: it listens on two consecutive loopback
ports (the TCTI finds the control channel at port + 1), forwards each connection to swtpm's
server and control ports, and decodes every command on the server channel: its header (tag,
size, command code, named) and, for the commands fr-profile uses, its authorization area
(password, HMAC or policy session, and the session attributes), and the response code.

  tpm_commands.py run --tpm-port PORT [--log FILE] [--record FILE] -- COMMAND...
      Runs COMMAND with every "{tcti}" in its arguments (and FR_PROFILE_TCTI) replaced by the
      proxy's TCTI; writes one JSON object per command to --log and the raw command bytes, as
      sent, to --record; exits with COMMAND's status. The tests use this mode
      (Tests/CLITests/TPMBusTests.swift).
  tpm_commands.py bench --fr-profile BIN
      Manufactures swtpm like a PC (swtpm_setup: RSA 2048 EK certificate, persistent EK at
      0x81010001; with and without the persistent SRK at 0x81000001), runs each operation
      through the proxy and prints the commands it sent beside the minimal sequence and the
      goal of issue 31, and searches every command byte for the PIN and its SHA-256.
"""

import base64
import argparse
import hashlib
import io
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# TPM 2.0 Part 2, 6.5.2 TPM_CC.
COMMAND_NAMES = {
    0x11F: "NV_UndefineSpaceSpecial", 0x120: "EvictControl", 0x121: "HierarchyControl", 0x122: "NV_UndefineSpace",
    0x124: "ChangeEPS", 0x125: "ChangePPS", 0x126: "Clear", 0x127: "ClearControl", 0x128: "ClockSet",
    0x129: "HierarchyChangeAuth", 0x12A: "NV_DefineSpace", 0x12B: "PCR_Allocate", 0x12C: "PCR_SetAuthPolicy",
    0x12D: "PP_Commands", 0x12E: "SetPrimaryPolicy", 0x130: "ClockRateAdjust", 0x131: "CreatePrimary",
    0x132: "NV_GlobalWriteLock", 0x133: "GetCommandAuditDigest", 0x134: "NV_Increment", 0x135: "NV_SetBits",
    0x136: "NV_Extend", 0x137: "NV_Write", 0x138: "NV_WriteLock", 0x139: "DictionaryAttackLockReset",
    0x13A: "DictionaryAttackParameters", 0x13B: "NV_ChangeAuth", 0x13C: "PCR_Event", 0x13D: "PCR_Reset",
    0x13E: "SequenceComplete", 0x13F: "SetAlgorithmSet", 0x140: "SetCommandCodeAuditStatus", 0x142: "IncrementalSelfTest",
    0x143: "SelfTest", 0x144: "Startup", 0x145: "Shutdown", 0x146: "StirRandom", 0x147: "ActivateCredential",
    0x148: "Certify", 0x149: "PolicyNV", 0x14A: "CertifyCreation", 0x14B: "Duplicate", 0x14C: "GetTime",
    0x14D: "GetSessionAuditDigest", 0x14E: "NV_Read", 0x14F: "NV_ReadLock", 0x150: "ObjectChangeAuth",
    0x151: "PolicySecret", 0x152: "Rewrap", 0x153: "Create", 0x154: "ECDH_ZGen", 0x155: "HMAC", 0x156: "Import",
    0x157: "Load", 0x158: "Quote", 0x159: "RSA_Decrypt", 0x15B: "HMAC_Start", 0x15C: "SequenceUpdate", 0x15D: "Sign",
    0x15E: "Unseal", 0x160: "PolicySigned", 0x161: "ContextLoad", 0x162: "ContextSave", 0x163: "ECDH_KeyGen",
    0x164: "EncryptDecrypt", 0x165: "FlushContext", 0x167: "LoadExternal", 0x168: "MakeCredential",
    0x169: "NV_ReadPublic", 0x16A: "PolicyAuthorize", 0x16B: "PolicyAuthValue", 0x16C: "PolicyCommandCode",
    0x16D: "PolicyCounterTimer", 0x16E: "PolicyCpHash", 0x16F: "PolicyLocality", 0x170: "PolicyNameHash",
    0x171: "PolicyOR", 0x172: "PolicyTicket", 0x173: "ReadPublic", 0x174: "RSA_Encrypt", 0x176: "StartAuthSession",
    0x177: "VerifySignature", 0x178: "ECC_Parameters", 0x17A: "GetCapability", 0x17B: "GetRandom",
    0x17C: "GetTestResult", 0x17D: "Hash", 0x17E: "PCR_Read", 0x17F: "PolicyPCR", 0x180: "PolicyRestart",
    0x181: "ReadClock", 0x182: "PCR_Extend", 0x183: "PCR_SetAuthValue", 0x184: "NV_Certify",
    0x185: "EventSequenceComplete", 0x186: "HashSequenceStart", 0x189: "PolicyGetDigest", 0x18A: "TestParms",
    0x18B: "Commit", 0x18C: "PolicyPassword", 0x191: "CreateLoaded", 0x193: "EncryptDecrypt2", 0x197: "CertifyX509",
}

# Handles before the authorization area (Part 3), for the commands whose sessions we decode.
HANDLE_COUNTS = {
    0x120: 2, 0x131: 1, 0x13A: 1, 0x147: 2, 0x148: 2, 0x14E: 2, 0x151: 2, 0x153: 1, 0x157: 1, 0x15D: 1,
    0x169: 1, 0x173: 1, 0x191: 1, 0x17B: 0, 0x165: 0, 0x176: 2, 0x17A: 0,
}

TAG_SESSIONS = 0x8002
PASSWORD_SESSION = 0x40000009


def command_name(code):
    return COMMAND_NAMES.get(code, "0x%03x" % code)


def decode_command(data):
    """The header and authorization sessions of one marshalled command."""
    tag, size, code = struct.unpack(">HII", data[:10])
    entry = {"command": command_name(code), "code": code, "size": size, "tag": tag}
    if tag == TAG_SESSIONS and code in HANDLE_COUNTS:
        offset = 10 + 4 * HANDLE_COUNTS[code]
        (auth_size,) = struct.unpack(">I", data[offset:offset + 4])
        offset += 4
        end = offset + auth_size
        sessions = []
        while offset < end:
            (handle,) = struct.unpack(">I", data[offset:offset + 4])
            offset += 4
            (nonce_size,) = struct.unpack(">H", data[offset:offset + 2])
            offset += 2 + nonce_size
            attributes = data[offset]
            offset += 1
            (hmac_size,) = struct.unpack(">H", data[offset:offset + 2])
            offset += 2 + hmac_size
            kind = {0x40: "password", 0x02: "hmac", 0x03: "policy"}.get(handle >> 24, "0x%08x" % handle)
            if handle == PASSWORD_SESSION:
                kind = "password"
            sessions.append({"kind": kind, "attributes": attributes, "decrypt": bool(attributes & 0x20),
                             "continue": bool(attributes & 0x01), "authSize": hmac_size})
        entry["sessions"] = sessions
    if code == 0x176:
        # StartAuthSession: tpmKey, bind, nonceCaller, encryptedSalt, sessionType, symmetric, authHash.
        tpm_key, _ = struct.unpack(">II", data[10:18])
        offset = 18
        (nonce_size,) = struct.unpack(">H", data[offset:offset + 2])
        offset += 2 + nonce_size
        (salt_size,) = struct.unpack(">H", data[offset:offset + 2])
        offset += 2 + salt_size
        session_type = data[offset]
        (symmetric,) = struct.unpack(">H", data[offset + 1:offset + 3])
        entry["salted"] = salt_size > 0
        entry["saltKey"] = "0x%08x" % tpm_key
        entry["sessionType"] = {0: "hmac", 1: "policy", 3: "trial"}.get(session_type, str(session_type))
        entry["symmetric"] = {0x0006: "aes", 0x0010: "null"}.get(symmetric, "0x%04x" % symmetric)
    if code == 0x131 and tag == TAG_SESSIONS:
        # CreatePrimary: primaryHandle, sessions, inSensitive (TPM2B), inPublic (TPM2B: its type first).
        (hierarchy,) = struct.unpack(">I", data[10:14])
        (auth_size,) = struct.unpack(">I", data[14:18])
        offset = 18 + auth_size
        (sensitive_size,) = struct.unpack(">H", data[offset:offset + 2])
        offset += 2 + sensitive_size + 2
        (key_type,) = struct.unpack(">H", data[offset:offset + 2])
        entry["hierarchy"] = {0x40000001: "owner", 0x4000000B: "endorsement", 0x4000000C: "platform",
                              0x40000007: "null"}.get(hierarchy, "0x%08x" % hierarchy)
        entry["type"] = {0x0001: "rsa", 0x0023: "ecc", 0x0008: "keyedhash", 0x0025: "symcipher"}.get(key_type, "0x%04x" % key_type)
    if HANDLE_COUNTS.get(code, 0) >= 1 and len(data) >= 14:
        (entry["handle"],) = struct.unpack(">I", data[10:14])
        entry["handle"] = "0x%08x" % entry["handle"]
    return entry


class Proxy:
    """Forwards 127.0.0.1:port → swtpm's server port and port + 1 → its control port, decoding
    the commands on the first. One thread, one selector; swtpm serves one connection at a time
    and tpm2-tss's swtpm TCTI connects once per command."""

    def __init__(self, tpm_port, record=None):
        self.tpm_port = tpm_port
        self.record = record
        self.commands = []
        self.data_connections = 0
        self.control_connections = 0
        self.lock = threading.Lock()
        self.selector = selectors.DefaultSelector()
        self.listeners = self._listen_pair()
        self.port = self.listeners[0].getsockname()[1]
        self.stopping = False
        self.wake_read, self.wake_write = socket.socketpair()
        self.selector.register(self.wake_read, selectors.EVENT_READ, ("wake", None))
        for index, listener in enumerate(self.listeners):
            self.selector.register(listener, selectors.EVENT_READ, ("accept", index))
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @property
    def tcti(self):
        return "swtpm:host=127.0.0.1,port=%d" % self.port

    @staticmethod
    def _listen_pair():
        for _ in range(64):
            first = socket.socket()
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            second = socket.socket()
            try:
                second.bind(("127.0.0.1", port + 1))
            except OSError:
                first.close()
                second.close()
                continue
            first.listen(16)
            second.listen(16)
            return first, second
        raise RuntimeError("no two consecutive free loopback ports")

    def _loop(self):
        while not self.stopping:
            for key, _ in self.selector.select():
                kind, value = key.data
                if kind == "wake":
                    return
                if kind == "accept":
                    self._accept(key.fileobj, value)
                else:
                    self._pump(key.fileobj, value)

    def _accept(self, listener, index):
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self.tpm_port + index))
        with self.lock:
            if index == 0:
                self.data_connections += 1
            else:
                self.control_connections += 1
        state = {"client": client, "upstream": upstream, "decode": index == 0, "out": b"", "in": b"", "pending": []}
        self.selector.register(client, selectors.EVENT_READ, ("pump", (state, "client")))
        self.selector.register(upstream, selectors.EVENT_READ, ("pump", (state, "upstream")))

    def _pump(self, sock, value):
        state, side = value
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            for name in ("client", "upstream"):
                try:
                    self.selector.unregister(state[name])
                except (KeyError, ValueError):
                    pass
                state[name].close()
            return
        other = state["upstream"] if side == "client" else state["client"]
        other.sendall(data)
        if not state["decode"]:
            return
        if side == "client":
            state["out"] += data
            while len(state["out"]) >= 10:
                size = struct.unpack(">I", state["out"][2:6])[0]
                if len(state["out"]) < size:
                    break
                command, state["out"] = state["out"][:size], state["out"][size:]
                entry = decode_command(command)
                with self.lock:
                    self.commands.append(entry)
                    state["pending"].append(entry)
                if self.record:
                    self.record.write(command)
                    self.record.flush()
        else:
            state["in"] += data
            while len(state["in"]) >= 10:
                size = struct.unpack(">I", state["in"][2:6])[0]
                if len(state["in"]) < size:
                    break
                response, state["in"] = state["in"][:size], state["in"][size:]
                (rc,) = struct.unpack(">I", response[6:10])
                with self.lock:
                    if state["pending"]:
                        state["pending"].pop(0)["rc"] = "0x%03x" % rc

    def stop(self):
        self.stopping = True
        self.wake_write.send(b"x")
        self.thread.join(timeout=5)
        for listener in self.listeners:
            listener.close()

    def take(self):
        """The commands decoded since the last call, and the connections made."""
        with self.lock:
            commands, self.commands = self.commands, []
            counts = (self.data_connections, self.control_connections)
            self.data_connections = self.control_connections = 0
        return commands, counts


def substitute(argv, tcti):
    return [argument.replace("{tcti}", tcti) for argument in argv]


def run_mode(arguments):
    record = open(arguments.record, "wb") if arguments.record else None
    proxy = Proxy(arguments.tpm_port, record)
    environment = dict(os.environ)
    environment["FR_PROFILE_TCTI"] = proxy.tcti
    try:
        status = subprocess.call(substitute(arguments.command, proxy.tcti), env=environment)
    finally:
        proxy.stop()
        if record:
            record.close()
    commands, (data, control) = proxy.take()
    if arguments.log:
        with open(arguments.log, "w") as log:
            json.dump({"commands": commands, "connections": control, "dataConnections": data}, log)
    return status


# MARK: - The benchmark


class SWTPM:
    """swtpm manufactured like a PC's TPM by swtpm_setup with its local CA, in `directory`."""

    def __init__(self, directory, persistent_srk):
        self.directory = directory
        state, ca = directory + "/state", directory + "/ca"
        os.makedirs(state)
        os.makedirs(ca)
        with open(directory + "/localca.conf", "w") as f:
            f.write("statedir = %s\nsigningkey = %s/signkey.pem\nissuercert = %s/issuercert.pem\ncertserial = %s/certserial\n"
                    % (ca, ca, ca, ca))
        with open(directory + "/localca.options", "w") as f:
            f.write("--platform-manufacturer fr-profile-bench\n--platform-version 2.1\n--platform-model swtpm\n")
        with open(directory + "/setup.conf", "w") as f:
            f.write("create_certs_tool = /usr/bin/swtpm_localca\ncreate_certs_tool_config = %s/localca.conf\n"
                    "create_certs_tool_options = %s/localca.options\nactive_pcr_banks = sha256\n" % (directory, directory))
        setup = ["swtpm_setup", "--tpm2", "--tpmstate", state, "--create-ek-cert", "--create-platform-cert",
                 "--config", directory + "/setup.conf", "--overwrite"]
        if persistent_srk:
            setup.append("--create-spk")
        subprocess.run(setup, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        self.root = ca + "/swtpm-localca-rootca-cert.pem"
        self.issuer = ca + "/issuercert.pem"
        control = socket.socket()
        for _ in range(64):
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            self.port = server.getsockname()[1]
            try:
                control.bind(("127.0.0.1", self.port + 1))
                server.close()
                break
            except OSError:
                server.close()
        control.listen(4)
        self.process = subprocess.Popen(
            ["swtpm", "socket", "--tpm2", "--tpmstate", "dir=" + state, "--server",
             "type=tcp,port=%d,bindaddr=127.0.0.1" % self.port, "--ctrl", "type=tcp,fd=%d" % control.fileno(),
             "--flags", "not-need-init,startup-clear"], pass_fds=[control.fileno()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        control.close()
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port + 1), timeout=2) as ctrl:
                    ctrl.sendall(b"\0\0\0\1")  # CMD_GET_CAPABILITY
                    if ctrl.recv(8)[:4] == b"\0\0\0\0":
                        with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                            return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("swtpm did not start")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def callback_step(callback_type, outputs, inputs):
    return {"authId": "bench", "callbacks": [{
        "type": callback_type, "output": [{"name": name, "value": value} for name, value in outputs],
        "input": [{"name": name, "value": ""} for name in inputs]}]}


def user_id(user):
    return "id=%s,ou=user,o=alpha,ou=services,ou=am-config" % user


def binding_step(user, authentication, challenge):
    return callback_step("DeviceBindingCallback", [
        ("userId", user_id(user)), ("username", user), ("authenticationType", authentication), ("challenge", challenge),
        ("title", "Authentication required"), ("subtitle", "Cryptography device binding"), ("description", "bench"),
        ("timeout", 60), ("attestation", False)], ["IDToken1jws", "IDToken1deviceName", "IDToken1deviceId", "IDToken1clientError"])


def signing_step(user, challenge):
    return callback_step("DeviceSigningVerifierCallback", [
        ("userId", user_id(user)), ("challenge", challenge), ("title", "Authentication required"),
        ("subtitle", "Cryptography device binding"), ("description", "bench"), ("timeout", 60)], ["IDToken1jws", "IDToken1clientError"])


def hidden_step(auth_id, callback_id, value):
    step = callback_step("HiddenValueCallback", [("value", value), ("id", callback_id)], ["IDToken1"])
    step["authId"] = auth_id
    return step


def first_input(body, suffix):
    for callback in body.get("callbacks", []):
        for item in callback.get("input", []):
            if item["name"].endswith(suffix):
                return item["value"]
    return ""


class Bench:
    # The fewest commands each operation needs (with a persistent SRK; without one, each process
    # adds CreatePrimary of the SRK and its FlushContext, and the ReadPublic of 0x81000001 fails).
    # With a persistent SRK the first operation of a state directory (bind, here) also checks that
    # it is the TCG template's, once (issue 37): CreatePrimary of the template and its FlushContext.
    MINIMAL = {
        "bind": ["ReadPublic", "Create", "Load", "Sign", "FlushContext"],
        "bind, PIN": ["ReadPublic", "StartAuthSession", "Create", "Load", "Sign", "FlushContext"],
        "sign": ["ReadPublic", "Load", "Sign", "FlushContext"],
        "sign, PIN": ["ReadPublic", "StartAuthSession", "Load", "Sign", "FlushContext"],
        "attest request (first)": ["NV_ReadPublic", "NV_ReadPublic", "NV_Read", "NV_Read", "ReadPublic", "ReadPublic", "Create"],
        "attest request (later)": ["ReadPublic", "ReadPublic"],
        "attest answer": ["ReadPublic", "Load", "StartAuthSession", "PolicySecret", "ActivateCredential", "FlushContext"],
        # Issue 28's boot quote: nine PCRs, and PCR_Read answers eight at most.
        "attest quote": ["ReadPublic", "Load", "Quote", "PCR_Read", "PCR_Read", "FlushContext"],
        "sign + evidence": ["ReadPublic", "Load", "Load", "Certify", "Sign", "FlushContext", "FlushContext"],
        "sign + evidence, PIN": ["ReadPublic", "StartAuthSession", "Load", "Load", "Certify", "Sign", "FlushContext",
                                 "FlushContext"],
    }
    # Issue 31's goals with a persistent SRK; without one, 2 more (the SRK's CreatePrimary and its
    # FlushContext). The journey's goal is for either authentication type.
    GOALS = {"bind": 5, "sign": 4, "sign, PIN": 5, "attest request (later)": 2, "attest answer": 6, "sign + evidence": 7,
             "attested journey, PIN (later)": 22, "attested journey (later)": 22}
    # The counts issue 31 measured on main at d929861 (persistent SRK, no SRK); its journey had no
    # PIN and found its attestation key.
    BEFORE = {"bind": (9, 12), "sign": (6, 7), "attest request (later)": (11, 12), "attest answer": (10, 11),
              "sign + evidence": (14, 17), "attested journey (later)": (53, 63)}
    PIN = "482916"

    def __init__(self, binary, persistent_srk, verbose):
        self.binary = binary
        self.verbose = verbose
        self.persistent_srk = persistent_srk
        self.directory = tempfile.mkdtemp(prefix="fr-profile-tpm-bench-")
        self.tpm = SWTPM(self.directory + "/tpm", persistent_srk)
        self.record = io.BytesIO()
        self.proxy = Proxy(self.tpm.port, self.record)
        self.state = self.directory + "/state"
        self.pin_file = self.directory + "/pin"
        with open(os.open(self.pin_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.PIN + "\n")
        self.results = []

    def close(self):
        self.proxy.stop()
        self.tpm.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def fr_profile(self, arguments, stdin=None, check=True):
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.directory, "LC_ALL": "C.UTF-8"}
        result = subprocess.run(
            ["setsid", "-w", self.binary] + arguments, input=stdin, capture_output=True, env=environment, timeout=300,
            start_new_session=True)
        if check and result.returncode != 0:
            raise RuntimeError("fr-profile %s: exit %d: %s" % (arguments[0], result.returncode, result.stderr.decode()[-800:]))
        return result

    def measure(self, name, arguments, stdin=None):
        self.proxy.take()
        started = time.monotonic()
        result = self.fr_profile(arguments + ["--tcti", self.proxy.tcti, "--state-dir", self.state], stdin)
        seconds = time.monotonic() - started
        commands, (_, connections) = self.proxy.take()
        self.results.append({"operation": name, "commands": commands, "connections": connections, "seconds": seconds})
        return result

    def step_file(self, name, step):
        path = "%s/%s.json" % (self.directory, name)
        with open(path, "w") as f:
            json.dump(step, f)
        return path

    @staticmethod
    def jws(stdout):
        return first_input(json.loads(stdout), "jws")

    def run(self):
        challenge = "CS3+g40VkHXx+dN7rpnJKhrEAvwZaYgbaXoEcpO5twM="
        tpm = ["--key-store", "tpm"]
        pin = ["--pin-file", self.pin_file]
        self.measure("bind", ["callback", self.step_file("bind", binding_step("demo", "NONE", challenge))] + tpm)
        self.measure("bind, PIN", ["callback", self.step_file("bind-pin", binding_step("pin", "APPLICATION_PIN", challenge))]
                     + tpm + pin)
        self.measure("sign", ["callback", self.step_file("sign", signing_step("demo", challenge))] + tpm)
        self.measure("sign, PIN", ["callback", self.step_file("sign-pin", signing_step("pin", challenge))] + tpm + pin)
        files = self.directory
        self.measure("attest request (first)", ["attest", "request", "-o", files + "/request.json"])
        self.measure("attest request (later)", ["attest", "request", "-o", files + "/request.json"])
        self.fr_profile(["attest", "challenge", files + "/request.json", "--roots", self.tpm.root, "--intermediates",
                         self.tpm.issuer, "--state", files + "/verifier.json", "-o", files + "/challenge.json"])
        self.measure("attest answer", ["attest", "answer", files + "/challenge.json", "-o", files + "/answer.json"])
        nonce = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
        self.measure("attest quote", ["attest", "quote", "--nonce", nonce, "--event-log", "none", "-o", files + "/quote.json"])
        self.fr_profile(["attest", "verify", "--state", files + "/verifier.json", "--answer", files + "/answer.json", "--boot",
                         files + "/quote.json", "--nonce", nonce, "--allow-secure-boot-off"])
        verify = ["attest", "verify", "--state", files + "/verifier.json", "--answer", files + "/answer.json", "--challenge", challenge]
        for name, user, extra in [("sign + evidence", "demo", []), ("sign + evidence, PIN", "pin", pin)]:
            result = self.measure(name, ["callback", self.step_file("sign-evidence", signing_step(user, challenge)), "--tpm-evidence"]
                                  + tpm + extra)
            with open(files + "/jws.txt", "w") as f:
                f.write(self.jws(result.stdout))
            self.fr_profile(verify + [files + "/jws.txt"])
        # Journeys through a scripted AM (below), each in a state directory of its own: the first
        # makes the attestation key, a later one finds it (and the cached request).
        self.state = self.directory + "/journey-state"
        for name in ["attested journey, PIN (first)", "attested journey, PIN (later)", "attested journey (later)"]:
            server = JourneyServer(self, "APPLICATION_PIN" if "PIN" in name else "NONE")
            try:
                self.measure(name, ["journey", "--server", server.url, "--realm", "alpha", "--tree", "AttestedBind", "--user",
                                    "demo", "--password-stdin"] + tpm + pin, stdin=b"bench-password\n")
                if server.verified != 2:
                    raise RuntimeError("%s: the scripted AM verified %d JWSs with evidence, not 2" % (name, server.verified))
            finally:
                server.stop()

    def report(self, label, baseline=None):
        print("## %s" % label)
        print()
        print("| operation | TPM commands | goal | before | connections | the commands sent | the fewest |")
        print("|---|---:|---:|---:|---:|---|---|")
        for result in self.results:
            names = [self.label(entry) for entry in result["commands"]]
            minimal = self.MINIMAL.get(result["operation"])
            goal = self.GOALS.get(result["operation"])
            if goal is not None and not self.persistent_srk:
                goal += 2
            before = self.BEFORE.get(result["operation"])
            print("| %s | %d | %s | %s | %d | %s | %s |" % (
                result["operation"], len(names), "" if goal is None else "≤ %d" % goal,
                "" if before is None else before[0 if self.persistent_srk else 1], result["connections"], " ".join(names),
                " ".join(minimal) if minimal and self.persistent_srk else ""))
        print()
        print("CreatePrimary[hierarchy type]; a command the TPM refused shows its response code: 0x18b TPM_RC_HANDLE "
              "(nothing at that handle), 0x922 TPM_RC_RETRY (tpm2-tss sends the command again).")
        leaks = self.pin_leaks()
        print("PIN-derived bytes in clear among the %d bytes of commands sent: %s" % (
            len(self.record.getvalue()), ", ".join(leaks) if leaks else "none (the PIN, its SHA-256, either half of that)"))
        print()
        if self.verbose:
            for result in self.results:
                print("%s:" % result["operation"])
                for entry in result["commands"]:
                    print("  " + json.dumps(entry))

    @staticmethod
    def label(entry):
        name = entry["command"]
        if "hierarchy" in entry:
            name += "[%s %s]" % (entry["hierarchy"], entry["type"])
        if entry.get("rc", "0x000") != "0x000":
            name += "(%s)" % entry["rc"]
        return name

    def pin_leaks(self):
        """Which of the PIN's forms occur in the commands sent."""
        record = self.record.getvalue()
        digest = hashlib.sha256(self.PIN.encode()).digest()
        forms = {"the PIN": self.PIN.encode(), "its SHA-256 (the key's authValue)": digest,
                 "the SHA-256's first half": digest[:16], "the SHA-256's second half": digest[16:]}
        return [name for name, form in forms.items() if form in record]

    def check_goals(self):
        missed = ["%s in clear on the bus" % leak for leak in self.pin_leaks()]
        # The first operation of the state directory checks a persistent SRK once (issue 37): one
        # CreatePrimary of its template (RSA for --create-spk's) and its FlushContext.
        srk_check = 1 if self.persistent_srk else 0
        for index, result in enumerate(self.results):
            # The persistent EK is read, never re-created, once the first request found it.
            if "(first)" not in result["operation"]:
                rsa = [entry for entry in result["commands"] if entry.get("type") == "rsa"]
                if len(rsa) > (srk_check if index == 0 else 0):
                    missed.append("%s: %d RSA CreatePrimary" % (result["operation"], len(rsa)))
        for index, result in enumerate(self.results):
            goal = self.GOALS.get(result["operation"])
            if goal is None:
                continue
            if index == 0:
                goal += 2 * srk_check
            if not self.persistent_srk:
                goal += 2
            if len(result["commands"]) > goal:
                missed.append("%s: %d > %d" % (result["operation"], len(result["commands"]), goal))
        return missed


class JourneyServer:
    """AM's authenticate endpoint for the tree AttestedBind (Username → Password → TPM attestation
    script, its boot quote round included → Device Binding → Device Signing Verifier → script), the
    script's checks made by `fr-profile attest challenge` and `attest verify` (the Swift verifier)."""

    def __init__(self, bench, authentication):
        self.bench = bench
        self.authentication = authentication
        self.verified = 0
        self.directory = tempfile.mkdtemp(prefix="journey-", dir=bench.directory)
        self.sessions = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = server.respond(body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.http.server_address[1]

    def stop(self):
        self.http.shutdown()
        self.http.server_close()

    def respond(self, body):
        auth_id = body.get("authId")
        if not auth_id:
            auth_id = "journey-%d" % len(self.sessions)
            self.sessions[auth_id] = "name"
            step = callback_step("NameCallback", [("prompt", "User Name")], ["IDToken1"])
            step["authId"] = auth_id
            return 200, step
        stage = self.sessions[auth_id]
        files = self.directory
        if stage == "name":
            self.sessions[auth_id] = "password"
            step = callback_step("PasswordCallback", [("prompt", "Password")], ["IDToken2"])
        elif stage == "password":
            self.sessions[auth_id] = "request"
            step = hidden_step(auth_id, "frTpmAttestationRequest", "request")
        elif stage == "request":
            with open(files + "/request.json", "w") as f:
                f.write(first_input(body, "IDToken1"))
            challenge = self.bench.fr_profile([
                "attest", "challenge", files + "/request.json", "--roots", self.bench.tpm.root, "--intermediates",
                self.bench.tpm.issuer, "--state", files + "/verifier.json"]).stdout.decode().strip()
            self.sessions[auth_id] = "challenge"
            step = hidden_step(auth_id, "frTpmAttestationChallenge", challenge)
        elif stage == "challenge":
            with open(files + "/answer.json", "w") as f:
                f.write(first_input(body, "IDToken1"))
            # The boot quote round (issue 28), judged by `attest verify --boot` (swtpm: no event log).
            self.nonce = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
            self.sessions[auth_id] = "quote"
            step = hidden_step(auth_id, "frTpmBootQuote", json.dumps({"v": 1, "nonce": self.nonce}))
        elif stage == "quote":
            with open(files + "/quote.json", "w") as f:
                f.write(first_input(body, "IDToken1"))
            self.bench.fr_profile(["attest", "verify", "--state", files + "/verifier.json", "--answer", files + "/answer.json",
                                   "--boot", files + "/quote.json", "--nonce", self.nonce, "--allow-secure-boot-off"])
            self.challenge = "bind-%s" % hashlib.sha256(os.urandom(16)).hexdigest()[:16]
            self.sessions[auth_id] = "binding"
            step = binding_step("demo", self.authentication, self.challenge)
        elif stage in ("binding", "signing"):
            with open(files + "/jws.txt", "w") as f:
                f.write(first_input(body, "jws"))
            self.bench.fr_profile(["attest", "verify", "--state", files + "/verifier.json", "--answer", files + "/answer.json",
                                   "--challenge", self.challenge, files + "/jws.txt"])
            self.verified += 1
            if stage == "signing":
                return 200, {"tokenId": "bench-token", "successUrl": "/am/console", "realm": "/alpha"}
            self.challenge = "sign-%s" % hashlib.sha256(os.urandom(16)).hexdigest()[:16]
            self.sessions[auth_id] = "signing"
            step = signing_step("demo", self.challenge)
        else:
            return 401, {"code": 401, "message": "Login failure"}
        step["authId"] = auth_id
        return 200, step


def bench_mode(arguments):
    missed = []
    for persistent_srk in (True, False):
        bench = Bench(os.path.abspath(arguments.fr_profile), persistent_srk, arguments.verbose)
        try:
            bench.run()
            label = "swtpm like a PC: RSA EK certificate, persistent EK 0x81010001, " + (
                "persistent RSA SRK 0x81000001 (swtpm_setup --create-spk)" if persistent_srk else "no persistent SRK")
            bench.report(label)
            missed += bench.check_goals()
            if arguments.json:
                with open(arguments.json + (".srk" if persistent_srk else ".nosrk") + ".json", "w") as f:
                    json.dump(bench.results, f, indent=1)
        finally:
            bench.close()
    if missed:
        print("goals missed: " + "; ".join(missed))
        return 1 if arguments.check else 0
    print("every goal met")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    run = modes.add_parser("run", help="run one command through the proxy")
    run.add_argument("--tpm-port", type=int, required=True, help="swtpm's server port (its control port is the next)")
    run.add_argument("--log", help="write the decoded commands here (JSON)")
    run.add_argument("--record", help="write the raw command bytes here")
    run.add_argument("command", nargs=argparse.REMAINDER)
    bench = modes.add_parser("bench", help="count the commands of each operation")
    bench.add_argument("--fr-profile", required=True, help="the fr-profile binary")
    bench.add_argument("--verbose", action="store_true", help="print every decoded command")
    bench.add_argument("--json", help="also write the results to PREFIX.srk.json and PREFIX.nosrk.json")
    bench.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    arguments = parser.parse_args()
    if arguments.mode == "run":
        if arguments.command and arguments.command[0] == "--":
            arguments.command = arguments.command[1:]
        return run_mode(arguments)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return bench_mode(arguments)


if __name__ == "__main__":
    sys.exit(main())
