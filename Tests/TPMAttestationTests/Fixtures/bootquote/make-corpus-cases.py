#!/usr/bin/python3
"""Generates a boot-quote case for every real firmware event log of the corpus
(Tests/TPMAttestationTests/Fixtures/eventlogs/corpus/corpus.json): the log's events are replayed
into a software TPM (swtpm) with tpm2_pcrextend, the TPM quotes PCRs 0-7 and 14 of its SHA-256 bank
with tpm2_quote, and the case carries the log unmodified as the quote document's event log.

    /usr/bin/python3 Tests/TPMAttestationTests/Fixtures/bootquote/make-corpus-cases.py [--only NAME,...] [OUTPUT_DIR]

Before writing a case it checks the replay against the log's ground truth: the TPM's PCR values
(SHA-1 and SHA-256 banks) must equal the values the log's source states in its own tests
(`statedPcrs` in corpus.json), or, where the source states none, tpm2_eventlog's replay of the
log (tpm2-tools 5.4; its PCR 0 is not compared when the log has EV_NO_ACTION events after the Spec
ID event, which 5.4 extends: tpm2-tools issue 3224). A log whose StartupLocality event says 3 is
replayed into a TPM started (TPM2_Startup) at locality 3 through swtpm's control channel, so PCR 0
starts as ...03 as on the machine. The SecureBoot variable measured into PCR 7 must be the one the
case expects. Needs what make-cases.py needs (swtpm, swtpm-tools, tpm2-tools 5.4, Python's
standard library); writes corpus-<name>.json into corpus/ next to this file (or OUTPUT_DIR), and
none for a log that disagrees with its ground truth (it then exits 1).
"""

import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "eventlogs")
ARGS = sys.argv[1:]
ONLY = None
if ARGS[:1] == ["--only"]:
    ONLY = set(ARGS[1].split(","))
    ARGS = ARGS[2:]
OUT = os.path.abspath(ARGS[0]) if ARGS else os.path.join(HERE, "corpus")

# make-cases.py's TPM, quote and document helpers (it parses its own arguments at import: none).
_argv, sys.argv = sys.argv, [sys.argv[0]]
_spec = importlib.util.spec_from_file_location("make_cases", os.path.join(HERE, "make-cases.py"))
mc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mc)
sys.argv = _argv

EV_NO_ACTION, EV_SEPARATOR = 0x3, 0x4
EV_EFI_VARIABLE_DRIVER_CONFIG = 0x80000001
SIZES = {0x0004: 20, 0x000B: 32, 0x000C: 48, 0x000D: 64, 0x0012: 32}


def parse_log(raw):
    """(format, [(pcr, type, {alg: digest}, data)]) of a TCG log, legacy SHA-1 or crypto-agile."""
    pcr, kind = struct.unpack_from("<II", raw, 0)
    size = struct.unpack_from("<I", raw, 28)[0]
    data = raw[32:32 + size]
    events = [(pcr, kind, {0x0004: raw[8:28]}, data)]
    at = 32 + size
    if kind == EV_NO_ACTION and data.startswith(b"Spec ID Event03\0"):
        count = struct.unpack_from("<I", data, 24)[0]
        sizes = dict(struct.unpack_from("<HH", data, 28 + 4 * i) for i in range(count))
        while at < len(raw):
            pcr, kind, count = struct.unpack_from("<III", raw, at)
            at += 12
            digests = {}
            for _ in range(count):
                alg = struct.unpack_from("<H", raw, at)[0]
                digests[alg] = raw[at + 2:at + 2 + sizes[alg]]
                at += 2 + sizes[alg]
            size = struct.unpack_from("<I", raw, at)[0]
            events.append((pcr, kind, digests, raw[at + 4:at + 4 + size]))
            at += 4 + size
        return "agile", events
    while at + 32 <= len(raw):
        pcr, kind = struct.unpack_from("<II", raw, at)
        size = struct.unpack_from("<I", raw, at + 28)[0]
        events.append((pcr, kind, {0x0004: raw[at + 8:at + 28]}, raw[at + 32:at + 32 + size]))
        at += 32 + size
    return "legacy", events


def startup_locality(events):
    for pcr, kind, _, data in events:
        if pcr == 0 and kind == EV_NO_ACTION and data.startswith(b"StartupLocality\0") and len(data) == 17:
            return data[16]
    return 0


def measured_secure_boot(events):
    """The SecureBoot variable (EFI global variable GUID) measured into PCR 7 before its separator:
    True for [1], False for [0] or empty, None when not measured."""
    for pcr, kind, _, data in events:
        if pcr == 7 and kind == EV_SEPARATOR:
            return None
        if pcr == 7 and kind == EV_EFI_VARIABLE_DRIVER_CONFIG and len(data) >= 32:
            names, length = struct.unpack_from("<QQ", data, 16)
            if data[:16] == mc.EFI_GLOBAL_VARIABLE and data[32:32 + 2 * names] == mc.utf16("SecureBoot"):
                return data[32 + 2 * names:32 + 2 * names + length] == b"\x01"
    return None


def start_tpm(state_dir, locality):
    """swtpm on the case's state; at locality 0 as make-cases.py starts it (startup-clear), else
    powered on without TPM2_Startup, the locality set through the control channel, then
    TPM2_Startup(CLEAR) sent from that locality (PCR 0 then starts as 00..0<locality>)."""
    if locality == 0:
        return mc.SoftwareTPM(state_dir)
    tpm = object.__new__(mc.SoftwareTPM)
    tpm.port = mc.free_port_pair()
    tpm.process = subprocess.Popen(
        ["swtpm", "socket", "--tpm2", "--server", "type=tcp,port=%d,bindaddr=127.0.0.1" % tpm.port,
         "--ctrl", "type=tcp,port=%d,bindaddr=127.0.0.1" % (tpm.port + 1), "--tpmstate", "dir=" + state_dir,
         "--flags", "not-need-init"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tpm.env = dict(os.environ, TPM2TOOLS_TCTI="swtpm:host=127.0.0.1,port=%d" % tpm.port)
    ctrl = ["swtpm_ioctl", "--tcp", "127.0.0.1:%d" % (tpm.port + 1)]
    for _ in range(100):
        if subprocess.run(ctrl + ["-l", str(locality)], capture_output=True).returncode == 0:
            break
        if tpm.process.poll() is not None:
            raise RuntimeError("swtpm did not start: " + tpm.process.stderr.read().decode())
        mc.time.sleep(0.05)
    else:
        raise RuntimeError("swtpm's control channel did not answer")
    # TPM2_Startup(TPM_SU_CLEAR) written to the data channel itself: tpm2-tools' swtpm TCTI sets
    # locality 0 through the control channel before its commands.
    with mc.socket.create_connection(("127.0.0.1", tpm.port), timeout=5) as s:
        s.sendall(bytes.fromhex("80010000000c000001440000"))
        answer = s.recv(10)
    if answer != bytes.fromhex("80010000000a00000000"):
        raise RuntimeError("TPM2_Startup at locality %d: %s" % (locality, answer.hex()))
    return tpm


def pcr_values(tpm, bank):
    """All 24 PCRs of a bank, from tpm2_pcrread's YAML."""
    text = tpm.run("tpm2_pcrread", bank + ":all").decode()
    return {int(i): bytes.fromhex(v) for i, v in re.findall(r"^\s+(\d+)\s*: 0x([0-9A-Fa-f]+)$", text, re.M)}


def replay_and_quote(work, base, entry, events, fmt, locality, nonce):
    case_dir = os.path.join(work, entry["name"])
    os.makedirs(os.path.join(case_dir, "state"))
    shutil.copy(base["state"], os.path.join(case_dir, "state"))
    tpm = start_tpm(os.path.join(case_dir, "state"), locality)
    try:
        specs = []
        for pcr, kind, digests, _ in events[1 if fmt == "agile" else 0:]:
            if kind == EV_NO_ACTION or pcr > 23:
                continue
            parts = ["%s=%s" % (alg, digests[code].hex()) for code, alg in ((0x0004, "sha1"), (0x000B, "sha256")) if code in digests]
            specs.append("%d:%s" % (pcr, ",".join(parts)))
        for at in range(0, len(specs), 16):  # tpm2_pcrextend extends its arguments in order
            tpm.run("tpm2_pcrextend", *specs[at:at + 16])
        tpm.run("tpm2_quote", "-c", mc.AK1, "-l", "sha256:" + ",".join(map(str, mc.QUOTED)), "-q", nonce.hex(), "-m", "msg",
                "-s", "sig", "-g", "sha256", cwd=case_dir)
        banks = {"sha1": pcr_values(tpm, "sha1"), "sha256": pcr_values(tpm, "sha256")}
    finally:
        tpm.close()
    return mc.read(os.path.join(case_dir, "msg")), mc.raw_signature(mc.read(os.path.join(case_dir, "sig"))), banks


def eventlog_tool_pcrs(path):
    result = subprocess.run(["tpm2_eventlog", path], capture_output=True)
    if result.returncode != 0:
        return None
    return mc.eventlog_pcrs(result.stdout.decode(errors="replace"))


def main():
    with open(os.path.join(CORPUS, "corpus", "corpus.json")) as f:
        corpus = json.load(f)["logs"]
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fr-bootcorpus-")
    failures = []
    try:
        base = mc.manufacture(work)
        ek_name = mc.name_of(base["ek"]).hex()
        for entry in corpus:
            name = entry["name"]
            if ONLY is not None and name not in ONLY:
                continue
            path = os.path.join(CORPUS, entry["file"])
            raw = mc.read(path)
            fmt, events = parse_log(raw)
            locality = startup_locality(events)
            nonce = os.urandom(32)
            failed_before = len(failures)
            attest, signature, banks = replay_and_quote(work, base, entry, events, fmt, locality, nonce)
            # Ground truth: the source's stated PCRs, else tpm2_eventlog's replay.
            line = "%s: %s log, locality %d" % (name, fmt, locality)
            if "statedPcrs" in entry:
                wrong = ["%s PCR %s" % (bank, pcr) for bank, values in entry["statedPcrs"].items()
                         for pcr, value in values.items() if banks[bank][int(pcr)].hex() != value]
                line += ", replay %s %s" % ("differs from" if wrong else "equals", entry["statedPcrsFrom"])
                if wrong:
                    failures.append("%s: the replay differs from %s: %s" % (name, entry["statedPcrsFrom"], ", ".join(wrong)))
                truth = "the TPM's PCRs after the replay equal the values %s states (%s)" % (
                    entry["statedPcrsFrom"], "; ".join("%s %s" % (b, ",".join(sorted(v, key=int))) for b, v in entry["statedPcrs"].items()))
            else:
                tool = eventlog_tool_pcrs(path)
                skip = {0} if any(k == EV_NO_ACTION for _, k, _, _ in events[1:]) else set()
                wrong = [p for p in range(24) if p not in skip and tool is not None and p in tool and tool[p] != banks["sha256"][p]]
                if tool is None or wrong:
                    failures.append("%s: tpm2_eventlog %s" % (name, "refuses the log" if tool is None else "replays otherwise: PCRs %s" % wrong))
                line += ", replay equals tpm2_eventlog's (sha256)" + (" but for PCR 0" if skip else "")
                truth = "no PCR values stated by the source: the TPM's SHA-256 PCRs equal tpm2_eventlog 5.4's replay" + (
                    " (PCR 0 not compared: 5.4 extends EV_NO_ACTION events)" if skip else "")
            measured = measured_secure_boot(events) if fmt == "agile" else None
            expect = entry["expect"]
            if expect["verdict"] == "accept" and measured != expect["secureBoot"]:
                failures.append("%s: SecureBoot measured %s, the case expects %s" % (name, measured, expect["secureBoot"]))
            stated = entry.get("statedSecureBoot")
            sb_truth = "SecureBoot measured into PCR 7: %s" % {True: "1 (on)", False: "0 or empty (off)", None: "not read (legacy SHA-1 log)"}[measured]
            if stated:
                sb_truth += "; the source says %s (%s)" % (stated, entry["statedSecureBootFrom"])
            line += ", SecureBoot %s" % measured
            print(line)
            if len(failures) > failed_before:
                continue  # a case that disagrees with its ground truth is not written
            doc = mc.quote_document(base, attest, signature, {p: banks["sha256"][p] for p in mc.QUOTED}, raw)
            case = {"name": "corpus-" + name, "description": "%s (%s)" % (entry["what"], ", ".join(
                "%s %s" % (s["repo"], s["path"]) for s in entry["sources"])),
                "groundTruth": {"pcrs": truth, "secureBoot": sb_truth},
                "akPublic": mc.b64u(base["ak1"]), "ekName": ek_name, "nonce": mc.b64u(nonce), "quote": doc,
                "policy": {"requireSecureBoot": entry["requireSecureBoot"]}, "expect": expect}
            with open(os.path.join(OUT, "corpus-%s.json" % name), "w") as f:
                json.dump(case, f, indent=1)
                f.write("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
