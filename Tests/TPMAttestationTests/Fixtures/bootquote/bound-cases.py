#!/usr/bin/python3
"""Writes the event-log bound cases (issue 37): accept-secure-boot.json's quote with its log grown
to each bound of the verifiers (EventLog.swift, am/fr-tpm-attestation.js: 4096 events after the
Spec ID event, 64 KiB of data an event, 512 KiB a log) and one unit past it. The added events are
EV_NO_ACTION (logged, never extended), so the quote still replays: at a bound both verifiers
accept, one past it both refuse with "eventLog" (the reason naming the bound).

    /usr/bin/python3 Tests/TPMAttestationTests/Fixtures/bootquote/bound-cases.py OUTPUT_DIR
    Tests/TPMAttestationTests/Fixtures/bootquote/run-am-script.sh OUTPUT_DIR/*.json

BootQuoteCasesTests runs them through both verifiers. Not kept as files: their logs are up to
half a megabyte each.
"""

import base64
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_EVENTS, MAX_EVENT_SIZE, MAX_LOG_SIZE = 4096, 65536, 524288
EV_NO_ACTION = 0x3


def b64u_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def no_action(size):
    """A TCG_PCR_EVENT2 EV_NO_ACTION in PCR 0 with zero SHA-1 and SHA-256 digests (the Spec ID
    table of the case's log lists those two) and `size` bytes of data: 72 bytes and the data."""
    return (struct.pack("<III", 0, EV_NO_ACTION, 2) + struct.pack("<H", 0x0004) + bytes(20) + struct.pack("<H", 0x000B)
            + bytes(32) + struct.pack("<I", size) + bytes(size))


def event_count(log):
    """Events after the Spec ID event of a crypto-agile log with SHA-1 and SHA-256 digests."""
    at = 32 + struct.unpack_from("<I", log, 28)[0]
    count = 0
    while at < len(log):
        at += 4 + 4 + 4 + 2 + 20 + 2 + 32
        at += 4 + struct.unpack_from("<I", log, at)[0]
        count += 1
    return count


def to_size(log, size):
    """`log` followed by as few EV_NO_ACTION events of at most MAX_EVENT_SIZE bytes as make
    `size` bytes in all, their data spread evenly."""
    left = size - len(log)
    count = -(-left // (72 + MAX_EVENT_SIZE))
    data, extra = divmod(left - 72 * count, count)
    grown = log + b"".join(no_action(data + (1 if i < extra else 0)) for i in range(count))
    assert len(grown) == size
    return grown


def main():
    out = sys.argv[1]
    base = json.load(open(os.path.join(HERE, "accept-secure-boot.json")))
    log = b64u_decode(base["quote"]["eventLog"])
    count = event_count(log)
    variants = [
        ("accept-at-event-bound", "%d events after the Spec ID event, the bound" % MAX_EVENTS,
         log + no_action(0) * (MAX_EVENTS - count), None),
        ("refuse-past-event-bound", "%d events, one past the bound" % (MAX_EVENTS + 1),
         log + no_action(0) * (MAX_EVENTS + 1 - count), "eventLog"),
        ("accept-at-event-size-bound", "an event of %d bytes, the bound" % MAX_EVENT_SIZE, log + no_action(MAX_EVENT_SIZE), None),
        ("refuse-past-event-size-bound", "an event of %d bytes, one past the bound" % (MAX_EVENT_SIZE + 1),
         log + no_action(MAX_EVENT_SIZE + 1), "eventLog"),
        ("accept-at-log-size-bound", "a log of %d bytes, the bound" % MAX_LOG_SIZE, to_size(log, MAX_LOG_SIZE), None),
        ("refuse-past-log-size-bound", "a log of %d bytes, one past the bound" % (MAX_LOG_SIZE + 1),
         to_size(log, MAX_LOG_SIZE + 1), "eventLog"),
    ]
    os.makedirs(out, exist_ok=True)
    for name, description, grown, check in variants:
        case = json.loads(json.dumps(base))
        case["name"] = name
        case["description"] = "accept-secure-boot's quote, its log grown with EV_NO_ACTION events: " + description
        case["quote"]["eventLog"] = b64u(grown)
        case["expect"] = ({"verdict": "refuse", "check": check} if check
                          else {"verdict": "accept", "method": "eventLog", "secureBoot": True})
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(case, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
