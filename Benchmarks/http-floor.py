#!/usr/bin/env python3
"""The floor of a new-connection HTTP round trip on this machine: the client web-face.py uses (a fresh TCP
connection per call, TCP_NODELAY) against a minimal answerer in a process of its own (blocking accept, read the
header, one fixed answer). No server can answer faster than this here; read web-face.py's row 1 against it."""
import socket, subprocess, sys, time
server = subprocess.Popen([sys.executable, "-c", r'''
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
body = b'{"status":"Playing"}'
answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(65536)
        if not d: break
        data += d
    if data: c.sendall(answer)
    c.close()
'''], stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline())
ts = []
for i in range(1020):
    t = time.perf_counter()
    c = socket.create_connection(("127.0.0.1", port)); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.sendall(b"GET /api/v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n")
    f = c.makefile("rb"); head = b""
    while not head.endswith(b"\r\n\r\n"): head += f.readline()
    f.read(20); f.close(); c.close()
    if i >= 20: ts.append((time.perf_counter() - t) * 1e3)
ts.sort()
print("floor new connection p50 %.3f p99 %.3f ms" % (ts[len(ts)//2], ts[int(len(ts)*.99)]))
server.kill()
