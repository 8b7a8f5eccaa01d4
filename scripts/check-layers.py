#!/usr/bin/env python3
"""Checks that the library targets point one way: the ones an embedder links for tokens, keys,
binding, posture and attestation reach neither the device collectors nor libudev.

usage: scripts/check-layers.py PACKAGE_JSON      (`swift package dump-package` output;
                                                  make lint runs it)

For each guarded target, the targets it reaches through Package.swift (transitively) and the
modules its sources import must not include a forbidden one. Exit 1 with one line per
breach, naming the path of targets that leads there; 0 when the layers hold.
"""
import json
import os
import re
import sys

GUARDED = ["DeviceIdentity", "OAuthTokens", "Login", "TPMKeys", "Posture", "DeviceBinding", "TPMAttestation", "StateStore", "DeviceFacts"]
FORBIDDEN = {"Collectors", "CUdev"}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    package = json.load(open(sys.argv[1]))
    targets = {t["name"]: t for t in package["targets"]}
    edges = {}
    for name, target in targets.items():
        edges[name] = [d["byName"][0] for d in target.get("dependencies", []) if "byName" in d]
    breaches = []
    for start in GUARDED:
        # Breadth-first, keeping the path that reached each target.
        paths = {start: [start]}
        queue = [start]
        while queue:
            current = queue.pop(0)
            for next_target in edges.get(current, []):
                if next_target in paths:
                    continue
                paths[next_target] = paths[current] + [next_target]
                queue.append(next_target)
        for forbidden in sorted(FORBIDDEN & paths.keys()):
            breaches.append(f"Package.swift: {start} reaches {forbidden} ({' → '.join(paths[forbidden])})")
        directory = targets[start].get("path") or f"Sources/{start}"
        for root, _, files in os.walk(directory):
            for file in sorted(files):
                if not file.endswith(".swift"):
                    continue
                path = os.path.join(root, file)
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    match = re.match(r"\s*(?:@\w+\s+)*import\s+(?:\w+\s+)?(\w+)", line)
                    if match and match.group(1) in FORBIDDEN:
                        breaches.append(f"{path}:{number}: {start} imports {match.group(1)}")
    for breach in breaches:
        print(breach)
    sys.exit(1 if breaches else 0)


if __name__ == "__main__":
    main()
