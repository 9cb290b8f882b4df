"""Which protocol and suite a cell really ran with, from the server's side
whenever the server can tell (Tomcat's counter endpoint, nginx's log, the
socket servers' NEGOTIATED lines), else from a client handshake."""

import json
import re
import socket
import ssl
import subprocess

import suites


def fetch_https_json(port, path, tls=True, timeout=10):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s = raw
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(raw, server_hostname="localhost")
    try:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    finally:
        s.close()
    _, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        # a server that closes without an HTTP answer fails its cell's
        # verification (the caller catches ValueError), not the whole run
        raise ValueError(f"no HTTP answer to GET {path} on port {port} ({len(data)} bytes)")
    return json.loads(body)


def diff_counts(before, after):
    out = {}
    for k, v in after.items():
        d = v - before.get(k, 0)
        if d > 0:
            out[k] = d
    return out


def judge(counts, suite, source):
    """counts: {"<protocol> <suite name>[ <group>]": n} -> verification record.
    The group (where the server can tell) is reported, not judged."""
    norm = {}
    for k, n in counts.items():
        proto, _, rest = k.partition(" ")
        name, _, group = rest.strip().partition(" ")
        key = f"{suites.norm_protocol(proto)} {suites.iana(name) if name else '-'}"
        key += f" {group_name(group)}" if group else ""
        norm[key] = norm.get(key, 0) + n
    expected = f"{suite.protocol} {suite.iana}" if suite.protocol != "plain" else "plain -"
    total = sum(norm.values())
    top = max(norm, key=norm.get) if norm else None
    proto, name, group = split_key(top)
    return {"source": source, "samples": total, "seen": norm, "protocol": proto,
            "suite": name, "group": group, "expected": expected,
            "ok": bool(norm) and {" ".join(split_key(k)[:2]) for k in norm} == {expected}}


def split_key(key):
    """"<protocol> <suite>[ <group>]" -> (protocol, suite, group or None)."""
    parts = (key or "").split(" ", 2)
    parts += [None] * (3 - len(parts))
    return tuple(p or None for p in parts)


# nginx's $ssl_curve and s_client speak OpenSSL's names; the report uses SunJSSE's
_GROUPS = {"x25519": "x25519", "x448": "x448", "prime256v1": "secp256r1", "secp256r1": "secp256r1",
           "secp384r1": "secp384r1", "secp521r1": "secp521r1", "x25519mlkem768": "X25519MLKEM768",
           "secp256r1mlkem768": "SecP256r1MLKEM768", "secp384r1mlkem1024": "SecP384r1MLKEM1024"}


def group_name(g):
    return _GROUPS.get(g.lower(), g)


def client_check(port, suite):
    """One s_client handshake: the fallback when a server cannot report."""
    cmd = ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost", "-brief"]
    try:
        p = subprocess.run(cmd, input=b"", capture_output=True, timeout=15)
        text = (p.stdout + p.stderr).decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        text = ""
    proto = re.search(r"Protocol version: (\S+)", text)
    cipher = re.search(r"Ciphersuite: (\S+)", text)
    group = re.search(r"(?:Negotiated TLS1.3 group|(?:Server|Peer) Temp Key): (?:ECDH, )?([A-Za-z0-9-]+)", text)
    counts = {}
    if proto and cipher:
        counts[f"{proto.group(1)} {cipher.group(1)}" + (f" {group.group(1)}" if group else "")] = 1
    v = judge(counts, suite, "client (openssl s_client after the cell)")
    if not counts:
        v["error"] = text[-300:]
    return v


def supports_keepalive(port, timeout=10):
    """Two requests on one TLS connection: does the server answer both?
    JSS-style socket servers answer one and close."""
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(raw, server_hostname="localhost")
        answers = 0
        with s:
            for _ in range(2):
                s.sendall(b"GET /16 HTTP/1.1\r\nHost: localhost\r\n\r\n")
                data = b""
                while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < 16:
                    b = s.recv(4096)
                    if not b:
                        return answers >= 2
                    data += b
                answers += 1
        return True
    except (OSError, ssl.SSLError):
        return False
