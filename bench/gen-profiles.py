#!/usr/bin/env python3
"""Generates a replay file for `fr-profile match --each --summary`: an incoming Linux profile
and N stored profiles as JSON Lines, in the shape AM stores them (_id, _rev, identifier,
metadata, location, lastSelectedDate, alias, recoveryCodes), about 1.4 KB each.

Most stored profiles are drifted copies of the incoming device (a kernel or fr-profile update,
an external display, a time-zone change, a network blip, 0-150 m away); some belong to other
devices. Deterministic for a given --seed. Python standard library only.

    bench/gen-profiles.py --count 100000 --out bench/out
"""
import argparse
import json
import math
import os
import random

IDENTIFIER = "9f3c2a7be41d0c55-4b1e8f0d2c6a9e7f31d5b0a8c4e2f6a1d9b3c7e5f0a2d4b6c8e1f3a5b7d9c0e2f4a6"
HOME = (52.520008, 13.404954)


def incoming_profile():
    return {
        "identifier": IDENTIFIER,
        "version": "1.0",
        "metadata": {
            "platform": {
                "platform": "Linux",
                "version": "6.8.0-45-generic",
                "device": "x86_64",
                "deviceName": "ada-thinkpad",
                "model": "ThinkPad X1 Carbon Gen 11",
                "brand": "LENOVO",
                "locale": "en_US",
                "timeZone": "Europe/Berlin",
                "jailBreakScore": 0,
            },
            "hardware": {
                "hardware": "x86_64",
                "manufacturer": "LENOVO",
                "storage": 476802,
                "memory": 31812,
                "cpu": 16,
                "display": {"width": 2880, "height": 1800, "orientation": 1},
                "camera": {"numberOfCameras": 1},
            },
            "browser": {
                "userAgent": "fr-profile/0.1.0 (Linux 6.8.0-45-generic; Ubuntu 24.04.1 LTS; x86_64; LENOVO ThinkPad X1 Carbon Gen 11)"
            },
            "bluetooth": {"supported": True},
            "network": {"connected": True},
        },
        "location": {"latitude": HOME[0], "longitude": HOME[1]},
    }


def moved(rng, metres):
    """A point `metres` away from HOME in a random direction (small-distance approximation)."""
    bearing = rng.uniform(0, 2 * math.pi)
    dlat = metres * math.cos(bearing) / 111_320.0
    dlon = metres * math.sin(bearing) / (111_320.0 * math.cos(math.radians(HOME[0])))
    return {"latitude": round(HOME[0] + dlat, 6), "longitude": round(HOME[1] + dlon, 6)}


def drifted(rng, base):
    profile = json.loads(json.dumps(base))
    meta = profile["metadata"]
    if rng.random() < 0.30:
        meta["platform"]["version"] = rng.choice(["6.8.0-44-generic", "6.8.0-47-generic", "6.8.0-48-generic"])
    if rng.random() < 0.20:
        meta["browser"]["userAgent"] = meta["browser"]["userAgent"].replace("0.1.0", rng.choice(["0.0.9", "0.1.1"]))
    if rng.random() < 0.15:
        meta["hardware"]["display"] = {"width": 3840, "height": 2160, "orientation": 1}
    if rng.random() < 0.10:
        meta["platform"]["timeZone"] = rng.choice(["Europe/London", "America/New_York"])
    if rng.random() < 0.10:
        meta["network"]["connected"] = False
    if rng.random() < 0.05:
        meta["hardware"]["camera"]["numberOfCameras"] = 2
    if rng.random() < 0.05:
        meta["hardware"]["storage"] = 476802 + rng.randint(-2048, 2048)
    if rng.random() < 0.03:
        meta["hardware"]["memory"] = 31812 - rng.randint(1, 8)
    if rng.random() < 0.01:
        meta["hardware"]["cpu"] = 8
    profile["location"] = moved(rng, rng.uniform(0, 150))
    return profile


def other_device(rng, base, index):
    profile = drifted(rng, base)
    profile["identifier"] = "%016x-%064x" % (rng.getrandbits(64), rng.getrandbits(256))
    profile["metadata"]["platform"]["deviceName"] = "host-%d" % index
    profile["metadata"]["hardware"]["memory"] = rng.choice([7872, 15734, 64217])
    return profile


def stored_record(rng, profile, index):
    """AM's stored shape around a profile (see shared/reference/profiles)."""
    record = {
        "_id": profile["identifier"],
        "_rev": str(rng.getrandbits(31)),
        "identifier": profile["identifier"],
        "metadata": profile["metadata"],
        "location": profile["location"],
        "lastSelectedDate": 1727110785783 + index * 60_000,
        "alias": "ada-thinkpad (Ubuntu 24.04.1 LTS) login %d" % index,
        "recoveryCodes": ["%040x" % rng.getrandbits(160) for _ in range(10)],
    }
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--other-share", type=float, default=0.1, help="share of profiles of other devices")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    base = incoming_profile()
    with open(os.path.join(args.out, "incoming.json"), "w") as out:
        json.dump(base, out, indent=2)
    total = 0
    with open(os.path.join(args.out, "stored.jsonl"), "w") as out:
        for index in range(args.count):
            profile = other_device(rng, base, index) if rng.random() < args.other_share else drifted(rng, base)
            line = json.dumps(stored_record(rng, profile, index), separators=(",", ":"), ensure_ascii=False)
            total += len(line) + 1
            out.write(line + "\n")
    print("wrote %d profiles (%.0f bytes each on average) to %s" % (args.count, total / args.count, args.out))


if __name__ == "__main__":
    main()
