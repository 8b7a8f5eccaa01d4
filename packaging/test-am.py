#!/usr/bin/env python3
"""A loopback PingAM for packaging/check-distros.sh: one tree, one DeviceProfileCallback.

    packaging/test-am.py PORT_FILE LOG_FILE

Binds 127.0.0.1 on a free port, writes the port to PORT_FILE once it listens, and serves AM's
authenticate protocol until killed (SIGTERM):
  POST <any prefix>/json/realms/root/authenticate?authIndexType=service&authIndexValue=<tree>
    without an authId: a step with a DeviceProfileCallback (metadata on, location off), the
    shape of Tests/CLITests/Fixtures/callbacks/authenticate-device-profile-MetadataOnly.json;
    with that authId and the callback answered by a profile (a JSON string in input[0].value)
    that has an identifier and metadata: AM's success body
    {"tokenId": ..., "successUrl": "/am/console", "realm": "/"};
    anything else: 401 {"code": 401, "reason": "Unauthorized", "message": "Login failure"}.
Each decision is appended to LOG_FILE as one JSON line ({"outcome": ..., "identifier": ...}),
so the caller can compare the identifier the client sent. Python 3 standard library only.
"""
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

AUTH_ID = "fr-profile-check-distros-auth-id"
TOKEN = "AQIC5wM2LY4Sfcz-check-distros-token.*AAJTSQACMDE.*"
PATH = "/json/realms/root/authenticate"


def profile_step():
    return {
        "authId": AUTH_ID,
        "callbacks": [
            {
                "type": "DeviceProfileCallback",
                "output": [
                    {"name": "metadata", "value": True},
                    {"name": "location", "value": False},
                    {"name": "message", "value": "Collecting profile ..."},
                ],
                "input": [{"name": "IDToken1", "value": ""}],
            }
        ],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_file = None

    def log_message(self, format, *args):  # quiet: the caller prints one line per check
        pass

    def record(self, **entry):
        with open(self.log_file, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def refuse(self, why):
        self.record(outcome="refused", reason=why)
        self.reply(401, {"code": 401, "reason": "Unauthorized", "message": "Login failure"})

    def do_GET(self):
        self.reply(405, {"code": 405, "reason": "Method Not Allowed", "message": "POST only"})

    def do_POST(self):
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not path.endswith(PATH) or "authIndexType=service" not in query:
            self.record(outcome="not found", path=self.path)
            return self.reply(404, {"code": 404, "reason": "Not Found", "message": "Not Found"})
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return self.refuse("request body is not JSON")
        if not isinstance(body, dict) or "authId" not in body:
            self.record(outcome="step", path=self.path)
            return self.reply(200, profile_step())
        if body.get("authId") != AUTH_ID:
            return self.refuse("unknown authId")
        try:
            callback = body["callbacks"][0]
            assert callback["type"] == "DeviceProfileCallback"
            value = callback["input"][0]["value"]
            profile = json.loads(value)
            identifier = profile["identifier"]
            assert isinstance(identifier, str) and identifier
            assert isinstance(profile["metadata"], dict)
        except (AssertionError, KeyError, IndexError, TypeError, ValueError) as error:
            return self.refuse(f"no profile with an identifier and metadata in the answer: {error!r}")
        self.record(outcome="success", identifier=identifier, bytes=len(value))
        self.reply(200, {"tokenId": TOKEN, "successUrl": "/am/console", "realm": "/"})


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test-am.py PORT_FILE LOG_FILE")
    port_file, Handler.log_file = sys.argv[1], sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".new", "w", encoding="utf-8") as out:
        out.write(f"{server.server_address[1]}\n")
    os.rename(port_file + ".new", port_file)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
