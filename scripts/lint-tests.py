#!/usr/bin/env python3
"""Finds tests that cannot fail: a `guard … else { … return }` in a test whose else-branch
returns (a bare `return`) without recording anything. Such a test passes when the code under test
wrongly takes the other branch (a binding that should fail succeeds, and the test returns
quietly), or when what it needs is missing (`guard geteuid() == 0 else { return }`: a test that
needs root or a tool says so with `.enabled(if:)` and shows as skipped).

usage: scripts/lint-tests.py DIR...      (make lint runs it on Tests/)

Exit 1 with one line per hit, `file:line: …`; 0 when there is none. An else-branch records
something when it holds `Issue.record`, `#expect`, `#require`, `XCTFail`, `throw`,
`preconditionFailure` or `fatalError`.

Also flags a time limit under 10 minutes: swift-testing starts a test's clock when the test is
scheduled, and on a 2-core machine a test waits for one of the cooperative pool's two threads
while the others run; a short limit then fails a test that never hung (CI, 2026-11-27: three
2-minute suites ran out behind two minute-long tests). The limit is there to end a hang well
inside CI's own, not to time a test.
"""
import os
import re
import sys

RECORDS = re.compile(r"Issue\.record|#expect|#require|XCTFail|\bthrow\b|preconditionFailure|fatalError")
GUARD = re.compile(r"^\s*guard\b")
TIME_LIMIT = re.compile(r"\.timeLimit\(\.minutes\((\d+)\)\)")
MINIMUM_MINUTES = 10


def else_block(lines, start):
    """The text of the else-branch of the guard starting at line `start`, and its first line."""
    text = ""
    index = start
    while index < len(lines):
        text += lines[index] + "\n"
        position = text.find("else {")
        if position >= 0:
            depth = 0
            for offset, char in enumerate(text[position + len("else "):]):
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        return text[position:position + len("else ") + offset + 1]
            # The block goes on past this line.
        index += 1
        if index - start > 40:
            break
    return None


def main(directories):
    hits = []
    for directory in directories:
        for root, _, files in os.walk(directory):
            if any(part == "Support" or part.endswith("Support") for part in root.split(os.sep)):
                continue  # test servers and helpers, not tests
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as handle:
                    lines = handle.read().split("\n")
                for number, line in enumerate(lines):
                    for limit in TIME_LIMIT.finditer(line):
                        if int(limit.group(1)) < MINIMUM_MINUTES:
                            hits.append(
                                f"{path}:{number + 1}: a time limit under {MINIMUM_MINUTES} minutes counts the wait "
                                "for a pool thread and fails tests that never hung")
                    if not GUARD.match(line):
                        continue
                    block = else_block(lines, number)
                    # A bare `return` ends a test; `return value` is a helper's answer.
                    if block and re.search(r"\breturn\s*(\}|\n)", block) and not RECORDS.search(block):
                        hits.append(
                            f"{path}:{number + 1}: a guard in a test returns without recording an issue "
                            "(use #require, Issue.record, or .enabled(if:) for what the test needs)")
    for hit in hits:
        print(hit)
    return 1 if hits else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
