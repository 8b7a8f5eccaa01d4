#!/usr/bin/env python3
"""A keyboard-interactive SSH client (Debian's python3-paramiko) for SigninSSHTests: signs in to
an sshd on 127.0.0.1 answering its prompts from a list, runs one command, and says what happened.

usage: ssh-kbdint.py PORT USER ANSWERS_JSON HOST_KEY_PUB COMMAND

ANSWERS_JSON is a list of strings, given to the server's prompts in order (one per prompt, across
all its keyboard-interactive requests); a prompt past the list's end is answered "". The server's
host key must be the one in HOST_KEY_PUB (an OpenSSH .pub file): the test's sshd, not another.
Prints one JSON object and exits 0 (2 on a usage error):
{"prompts": [{"prompt": TEXT, "echo": BOOL}, ...], "instructions": [TEXT, ...],
 "authenticated": BOOL, "error": TEXT or null, "stdout": TEXT, "stderr": TEXT,
 "status": the command's exit status or null}
"""
import json
import socket
import sys

import paramiko

TIMEOUT = 60


def main(arguments):
    if len(arguments) != 5:
        sys.stderr.write(__doc__)
        return 2
    port, user, answers_json, host_key_path, command = arguments
    answers = list(json.loads(answers_json))
    with open(host_key_path, encoding="utf-8") as handle:
        key_type, key_data = handle.read().split()[:2]
    report = {"prompts": [], "instructions": [], "authenticated": False, "error": None, "stdout": "", "stderr": "",
              "status": None}

    def handler(title, instructions, prompts):
        if title or instructions:
            report["instructions"].append("\n".join(text for text in (title, instructions) if text))
        replies = []
        for prompt, echo in prompts:
            report["prompts"].append({"prompt": prompt, "echo": bool(echo)})
            replies.append(answers.pop(0) if answers else "")
        return replies

    transport = None
    try:
        sock = socket.create_connection(("127.0.0.1", int(port)), timeout=TIMEOUT)
        transport = paramiko.Transport(sock)
        transport.banner_timeout = TIMEOUT
        transport.auth_timeout = TIMEOUT
        transport.start_client(timeout=TIMEOUT)
        server_key = transport.get_remote_server_key()
        if server_key.get_name() != key_type or server_key.get_base64() != key_data:
            raise paramiko.SSHException(f"unexpected host key {server_key.get_name()} {server_key.get_base64()}")
        transport.auth_interactive(user, handler)
        report["authenticated"] = transport.is_authenticated()
        channel = transport.open_session(timeout=TIMEOUT)
        channel.settimeout(TIMEOUT)
        channel.exec_command(command)
        stdout, stderr = b"", b""
        while True:
            chunk = channel.recv(65536)
            if not chunk:
                break
            stdout += chunk
        while True:
            chunk = channel.recv_stderr(65536)
            if not chunk:
                break
            stderr += chunk
        report["status"] = channel.recv_exit_status()
        report["stdout"] = stdout.decode("utf-8", "replace")
        report["stderr"] = stderr.decode("utf-8", "replace")
    except Exception as error:  # noqa: BLE001 — every failure is the report's, not a traceback
        report["error"] = f"{type(error).__name__}: {error}"
    finally:
        if transport is not None:
            transport.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
