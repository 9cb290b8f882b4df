#!/usr/bin/env python3
"""Clients that resume, for tests/haproxy/run.sh: THREADS loops for SECONDS,
each connecting to HOST:PORT, offering the session (ticket) its previous
connection got, sending one HTTP/1.1 request with Connection: close and
reading the whole response. Prints one JSON line: connections, resumed (the
connections whose handshake was abbreviated, as OpenSSL's client sees it),
failures (handshake or I/O errors, or a status other than 200) and the first
few failure reasons. The first connection of each thread has no session and
is not counted."""
import json
import socket
import ssl
import sys
import threading
import time

host, port, seconds, threads, version, cafile = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5], sys.argv[6]
ctx = ssl.create_default_context(cafile=cafile)
ctx.minimum_version = ctx.maximum_version = \
    ssl.TLSVersion.TLSv1_3 if version == "1.3" else ssl.TLSVersion.TLSv1_2
lock = threading.Lock()
totals = {"connections": 0, "resumed": 0, "failures": 0, "reasons": [], "protocols": []}


def once(session):
    with socket.create_connection((host, port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            if not data.startswith(b"HTTP/1.1 200"):
                raise IOError("status line %r" % data[:40])
            return s.session, s.session_reused, s.version()


def loop():
    session, first, end = None, True, time.time() + seconds
    while time.time() < end:
        try:
            session, reused, proto = once(session)
            ok, why = True, None
        except (OSError, ssl.SSLError) as e:
            ok, why, reused, proto = False, repr(e)[:160], False, None
        with lock:
            if not first:
                totals["connections"] += 1
                totals["resumed"] += 1 if reused else 0
                if not ok:
                    totals["failures"] += 1
                    if len(totals["reasons"]) < 3:
                        totals["reasons"].append(why)
            if proto and proto not in totals["protocols"]:
                totals["protocols"].append(proto)
        first = False


workers = [threading.Thread(target=loop) for _ in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print(json.dumps(totals))
