#!/usr/bin/python3
"""Validates fr-profile's documents against schemas/*.schema.json with an implementation the
project did not write (Debian's python3-jsonschema, Draft 2020-12).

usage: scripts/check-schemas.py                  every schema against the metaschema, and every
                                                 committed document against its schema
       scripts/check-schemas.py SCHEMA FILE...   FILE ('-': standard input) against
                                                 schemas/SCHEMA.schema.json; --lines: one document
                                                 per line (JSON Lines)

Exit 0 when everything is valid; 1 with one line per invalid document, naming the file, the
JSON path and the failed rule.
"""
import glob
import json
import os
import sys

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Committed documents fr-profile wrote or reads, by schema.
COMMITTED = {
    "profile": ["Tests/CLITests/Fixtures/golden/*.json"],
    "match-config": ["match-config.json"],
    "signin": ["packaging/signin/signin.json.example"],
    "attestation-request": ["Tests/TPMAttestationTests/Fixtures/recorded/request.json"],
    "attestation-evidence": ["Tests/TPMAttestationTests/Fixtures/recorded/evidence.json"],
}


# The golden profiles stand machine-dependent values in as placeholders (the tests compare the
# rest byte for byte); a value of the right shape replaces each before validation.
PLACEHOLDERS = {'"<identifier>"': '"0123456789abcdef-0123456789abcdef0123456789abcdef01234567"', '"<storage>"': "1"}


def validator(name):
    with open(os.path.join(ROOT, "schemas", name + ".schema.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def problems(check, document, where):
    found = []
    for error in sorted(check.iter_errors(document), key=lambda e: list(e.absolute_path)):
        path = "$" + "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in error.absolute_path)
        found.append(f"{where}: {path}: {error.message}")
    return found


def load(path, lines, placeholders=False):
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    if placeholders:
        for placeholder, value in PLACEHOLDERS.items():
            text = text.replace(placeholder, value)
    if not lines:
        return [(path, json.loads(text))]
    return [(f"{path}:{n}", json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def main(arguments):
    lines = "--lines" in arguments
    arguments = [a for a in arguments if a != "--lines"]
    failures = []
    if not arguments:
        for path in sorted(glob.glob(os.path.join(ROOT, "schemas", "*.schema.json"))):
            validator(os.path.basename(path)[: -len(".schema.json")])
        for name, patterns in COMMITTED.items():
            check = validator(name)
            files = [f for p in patterns for f in sorted(glob.glob(os.path.join(ROOT, p)))]
            if not files:
                failures.append(f"{name}: no committed document matches {patterns}")
            for path in files:
                for where, document in load(path, False, placeholders=True):
                    failures += problems(check, document, os.path.relpath(where, ROOT))
        count = len(glob.glob(os.path.join(ROOT, "schemas", "*.schema.json")))
        if not failures:
            print(f"{count} schemas valid; committed documents valid")
    else:
        check = validator(arguments[0])
        for path in arguments[1:]:
            for where, document in load(path, lines):
                failures += problems(check, document, where)
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError) as error:
        sys.exit(f"check-schemas.py: {error}")
