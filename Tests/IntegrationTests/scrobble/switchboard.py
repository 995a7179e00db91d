#!/usr/bin/env python3
"""A ListenBrainz-compatible stand-in for the scrobbling tests (ScrobblingTests.swift): it writes every request it gets
as a JSON line (path, Authorization header, body, mode, the status it answered), and answers as its mode file says, read
at each request:
  forward URL   pass the request to URL (Maloja) and give back its answer
  500           answer 500, as Maloja does for a server error
  hang          take the request and never answer, until the mode changes (then drop the connection)
  ok            answer 200 without keeping anything
Usage: switchboard.py PORT MODE_FILE LOG_FILE. Python's standard library only."""
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, mode_file, log_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()


def mode():
    try:
        with open(mode_file) as f:
            return f.read().strip()
    except FileNotFoundError:
        return "ok"


def record(entry):
    with lock, open(log_file, "a") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            document = json.loads(body or b"null")
        except ValueError:
            document = body.decode("utf-8", "replace")
        current = mode()
        entry = {"path": self.path, "auth": self.headers.get("Authorization"), "body": document, "mode": current}
        if current == "hang":
            record({**entry, "status": None})
            while mode() == "hang":
                time.sleep(0.05)
            self.close_connection = True
            return
        if current == "500":
            status, answer = 500, b'{"code": 500, "error": "Unspecified server error."}'
        elif current.startswith("forward "):
            request = urllib.request.Request(current.split(" ", 1)[1] + self.path, data=body, method="POST",
                                             headers={"Content-Type": "application/json",
                                                      "Authorization": self.headers.get("Authorization") or ""})
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    status, answer = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, answer = error.code, error.read()
        else:
            status, answer = 200, b'{"status": "ok"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        record({**entry, "status": status})


ThreadingHTTPServer.allow_reuse_address = True
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
