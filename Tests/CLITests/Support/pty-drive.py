#!/usr/bin/env python3
"""Drives a command through a pseudo-terminal that is its controlling terminal, as a person at a
keyboard would, for the CLI tests of prompts (TerminalPromptTests).

usage: pty-drive.py STEPS_JSON COMMAND [ARG...]

STEPS_JSON is a list of steps, run in order:
  {"expect": TEXT, "timeout": S}   wait until TEXT appears on the screen (fails after S s, default 15)
  {"echo": true|false}             record whether the terminal echoes now (lflag ECHO), as "echo"
  {"absent": TEXT}                 record whether TEXT is absent from the argv and environment of the
                                   command and all its descendants now, as "absent"
  {"send": TEXT}                   type TEXT (\\u0003 is Ctrl-C, \\u0004 Ctrl-D at a line start)
Then waits for the command to end (at most 30 s; killed after) and prints one JSON object:
{"screen": everything shown, "echo": [...], "absent": [...], "status": exit code or -signal,
 "failed": the first step that failed or null}.
"""
import json
import os
import pty
import select
import signal
import sys
import termios
import time


def descendants(pid):
    found = [pid]
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if parent == pid:
            found += descendants(int(entry))
    return found


def absent_everywhere(pid, text):
    needle = text.encode()
    for process in descendants(pid):
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{process}/{name}", "rb") as handle:
                    if needle in handle.read():
                        return False
            except OSError:
                pass
    return True


def main():
    steps = json.loads(sys.argv[1])
    command = sys.argv[2:]
    pid, master = pty.fork()
    if pid == 0:
        # As a login shell leaves them: Ctrl-C interrupts. (A test runner may hand its children
        # SIGINT ignored, which exec keeps.)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execv(command[0], command)
    screen = b""
    result = {"echo": [], "absent": [], "failed": None}

    def pump(timeout):
        nonlocal screen
        ready, _, _ = select.select([master], [], [], timeout)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                return False
            if not data:
                return False
            screen += data
        return True

    # Where the last expected text ended: each `expect` looks only at what came after it, so a
    # second "Password" prompt is not found in the first one's text.
    seen = 0
    for step in steps:
        if "expect" in step:
            wanted = step["expect"].encode()
            deadline = time.monotonic() + step.get("timeout", 15)
            while screen.find(wanted, seen) < 0:
                left = deadline - time.monotonic()
                if left <= 0 or not pump(min(left, 0.1)):
                    if screen.find(wanted, seen) < 0:
                        result["failed"] = step
                    break
            if result["failed"]:
                break
            seen = screen.find(wanted, seen) + len(wanted)
        elif "echo" in step:
            # No wait: fr-profile turns echo off before it writes a prompt, so once the prompt
            # (the step before) is on the screen the flag is what the user types under.
            result["echo"].append(bool(termios.tcgetattr(master)[3] & termios.ECHO))
        elif "absent" in step:
            result["absent"].append(absent_everywhere(pid, step["absent"]))
        elif "send" in step:
            os.write(master, step["send"].encode())
    deadline = time.monotonic() + 30
    status = None
    while status is None:
        pump(0.05)
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            status = -os.WTERMSIG(code) if os.WIFSIGNALED(code) else os.WEXITSTATUS(code)
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
    while pump(0.05):
        pass
    result["screen"] = screen.decode("utf-8", "replace")
    result["status"] = status
    print(json.dumps(result))


if __name__ == "__main__":
    main()
