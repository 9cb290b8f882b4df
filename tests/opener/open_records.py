#!/usr/bin/env python3
"""Opens every TLS record captured by OpenerRun with an implementation that
is not OpenSSL: Python's `cryptography` for the AEADs and HMAC, and this
file's own TLS 1.3 key schedule (HKDF-Expand-Label from the key log's
traffic secrets, "traffic upd" at each KeyUpdate) and TLS 1.2 key block
(the PRF over the key log's master secret and the hellos' randoms).

For each connection directory (c2s.bin, s2c.bin, meta.txt) it checks that
every record both ends sent after the keys authenticates, that the
application bytes each side sent are the stream OpenerRun wrote, that the
captures end on a record boundary, and, across every connection given, that
no (key, nonce) pair protected two records tlsbridge sent. Where meta.txt
names a key limit (a peer that never re-keys on its own, tlsbridge asking for
no KeyUpdate), every TLS 1.3 application key tlsbridge used but the last must
have protected exactly that many bytes, the last at most that many, each of
its KeyUpdates must ask for the peer's, and the peer must have answered: Go
each one, OpenSSL (one answer for the requests that came since it last
wrote) at least once.

  open_records.py KEYLOG DIR...                 check; exit 1 on any failure
  open_records.py --break MODE KEYLOG DIR...    the same with one deliberate
      fault, which must make it fail (the suite's proof that it can):
      skip-seq      the opener skips a sequence number in tlsbridge's direction
                    (TLS 1.3)
      reuse-seq     the opener reuses a sequence number in tlsbridge's direction
                    (TLS 1.2 ChaCha20-Poly1305)
      repeat-nonce  a TLS 1.2 AES-GCM record tlsbridge sent is re-sealed with
                    the previous record's explicit nonce (and its own sequence
                    number, so it authenticates): only the pair check sees it
"""
import hashlib
import hmac
import os
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

# suite id -> (TLS 1.3?, AEAD, key length, hash)
SUITES = {
    0x1301: (True, "gcm", 16, "sha256"),
    0x1302: (True, "gcm", 32, "sha384"),
    0x1303: (True, "chacha", 32, "sha256"),
    0xC02B: (False, "gcm", 16, "sha256"),
    0xC02C: (False, "gcm", 32, "sha384"),
    0xCCA9: (False, "chacha", 32, "sha256"),
    0xC02F: (False, "gcm", 16, "sha256"),
    0xC030: (False, "gcm", 32, "sha384"),
    0xCCA8: (False, "chacha", 32, "sha256"),
}
HANDSHAKE, CCS, ALERT, APPDATA = 22, 20, 21, 23
FINISHED, KEY_UPDATE = 20, 24
TAG = 16


class Failure(Exception):
    pass


def stream(label, length):
    """OpenerRun's payload: SHA-256(label || 8-byte counter) blocks."""
    out = bytearray()
    i = 0
    lab = label.encode("ascii")
    while len(out) < length:
        out += hashlib.sha256(lab + i.to_bytes(8, "big")).digest()
        i += 1
    return bytes(out[:length])


# ---- key schedules ----

def hkdf_expand(hash_name, secret, info, length):
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(secret, block + info + bytes([i]), hash_name).digest()
        out += block
        i += 1
    return out[:length]


def expand_label(hash_name, secret, label, context, length):
    full = b"tls13 " + label
    info = length.to_bytes(2, "big") + bytes([len(full)]) + full + bytes([len(context)]) + context
    return hkdf_expand(hash_name, secret, info, length)


def prf12(hash_name, secret, label, seed, length):
    seed = label + seed
    out, a = b"", seed
    while len(out) < length:
        a = hmac.new(secret, a, hash_name).digest()
        out += hmac.new(secret, a + seed, hash_name).digest()
    return out[:length]


def aead(kind, key):
    return AESGCM(key) if kind == "gcm" else ChaCha20Poly1305(key)


def xor_seq(iv, seq):
    return bytes(a ^ b for a, b in zip(iv, seq.to_bytes(12, "big")))


# ---- parsing ----

def records(data, where):
    out, at = [], 0
    while at < len(data):
        if len(data) - at < 5:
            raise Failure(f"{where}: {len(data) - at} bytes after the last whole record")
        typ, ver, n = data[at], data[at + 1:at + 3], int.from_bytes(data[at + 3:at + 5], "big")
        if typ not in (HANDSHAKE, CCS, ALERT, APPDATA) or ver[0] != 3 or n > 16384 + 256:
            raise Failure(f"{where}: not a TLS record at byte {at}: {data[at:at + 5].hex()}")
        if at + 5 + n > len(data):
            raise Failure(f"{where}: the capture ends inside a record at byte {at}")
        out.append((data[at:at + 5], data[at + 5:at + 5 + n]))
        at += 5 + n
    return out


def hello(recs, want, where):
    """The first handshake message of a direction's plaintext records (a hello)."""
    buf = b""
    for hdr, body in recs:
        if hdr[0] != HANDSHAKE:
            break
        buf += body
        if len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[1:4], "big"):
            break
    if len(buf) < 4 or buf[0] != want:
        raise Failure(f"{where}: no hello message of type {want}")
    return buf[4:4 + int.from_bytes(buf[1:4], "big")]


def server_hello(body, where):
    random = body[2:34]
    sid = body[34]
    at = 35 + sid
    suite = int.from_bytes(body[at:at + 2], "big")
    at += 3
    tls13 = False
    if at + 2 <= len(body):
        end = at + 2 + int.from_bytes(body[at:at + 2], "big")
        at += 2
        while at + 4 <= end:
            typ, n = int.from_bytes(body[at:at + 2], "big"), int.from_bytes(body[at + 2:at + 4], "big")
            if typ == 43 and body[at + 4:at + 6] == b"\x03\x04":
                tls13 = True
            at += 4 + n
    if random == hashlib.sha256(b"HelloRetryRequest").digest():
        raise Failure(f"{where}: a HelloRetryRequest, which this opener does not follow")
    if suite not in SUITES:
        raise Failure(f"{where}: suite 0x{suite:04x} is not one this opener knows")
    if SUITES[suite][0] != tls13:
        raise Failure(f"{where}: suite 0x{suite:04x} with the wrong protocol version")
    return random, suite


class Direction:
    """One direction's records, opened in order; knows its key and sequence."""

    def __init__(self, name, suite, is_tlsbridge, brk):
        self.name = name
        self.tls13, self.kind, self.key_len, self.hash = SUITES[suite]
        self.is_tlsbridge = is_tlsbridge
        self.brk = brk
        self.key = None
        self.opened = 0
        self.app = bytearray()
        self.hs = b""  # handshake bytes not yet a whole message
        self.updates = self.updates_requested = 0
        self.alerts = []
        self.pairs = []  # (key, nonce, record number)
        self.app_records = 0
        self.key_bytes = []  # TLS 1.3: application bytes under each key, the handshake key first
        self.on_finished = None  # TLS 1.3: the move to the application secret
        self.last_type = None

    def set_tls13(self, secret):
        self.secret = secret
        self.key = expand_label(self.hash, secret, b"key", b"", self.key_len)
        self.iv = expand_label(self.hash, secret, b"iv", b"", 12)
        self.cipher = aead(self.kind, self.key)
        self.seq = 0
        self.key_bytes.append(0)

    def set_tls12(self, key, iv):
        self.key, self.iv, self.cipher, self.seq = key, iv, aead(self.kind, key), 0

    def open(self, idx, hdr, body):
        if self.brk:
            body = self.brk.before(self, hdr, body)
        where = f"{self.name} record {idx} (sequence {self.seq})"
        if self.tls13:
            if hdr[0] != APPDATA:
                raise Failure(f"{where}: outer type {hdr[0]} after the keys")
            nonce, ct, aad = xor_seq(self.iv, self.seq), body, hdr
        else:
            if self.kind == "gcm":
                nonce, ct = self.iv + body[:8], body[8:]
            else:
                nonce, ct = xor_seq(self.iv, self.seq), body
            if len(ct) < TAG:
                raise Failure(f"{where}: shorter than its tag")
            aad = self.seq.to_bytes(8, "big") + hdr[:3] + (len(ct) - TAG).to_bytes(2, "big")
        try:
            plain = self.cipher.decrypt(nonce, ct, aad)
        except InvalidTag:
            raise Failure(f"{where}: authentication failed") from None
        if self.is_tlsbridge:
            self.pairs.append((self.key, nonce, f"{self.name} record {idx}"))
        self.opened += 1
        self.seq += 1
        if self.tls13:
            inner = plain.rstrip(b"\0")
            if not inner:
                raise Failure(f"{where}: no inner content type")
            typ, plain = inner[-1], inner[:-1]
        else:
            typ = hdr[0]
        if len(plain) > 16384:
            raise Failure(f"{where}: {len(plain)} bytes of plaintext, more than a record may carry")
        self.last_type = typ
        if typ == APPDATA:
            self.app += plain
            self.app_records += 1
            if self.tls13:
                self.key_bytes[-1] += len(plain)
            if self.brk:
                self.brk.after_app(self)
        elif typ == ALERT:
            self.alerts.append(plain.hex())
        elif typ == HANDSHAKE:
            self.handshake(plain, where)
        elif typ != CCS:
            raise Failure(f"{where}: inner content type {typ}")

    def handshake(self, data, where):
        self.hs += data
        while len(self.hs) >= 4 and len(self.hs) >= 4 + int.from_bytes(self.hs[1:4], "big"):
            n = int.from_bytes(self.hs[1:4], "big")
            typ, body, self.hs = self.hs[0], self.hs[4:4 + n], self.hs[4 + n:]
            if not self.tls13:
                continue
            if typ == FINISHED and self.on_finished:
                change, self.on_finished = self.on_finished, None
            elif typ == KEY_UPDATE:
                if body not in (b"\0", b"\1"):
                    raise Failure(f"{where}: a KeyUpdate of {body.hex()}")
                self.updates += 1
                self.updates_requested += body[0]
                change = lambda: self.set_tls13(  # noqa: E731
                    expand_label(self.hash, self.secret, b"traffic upd", b"", len(self.secret)))
            else:
                continue
            if self.hs:
                raise Failure(f"{where}: handshake bytes after a key change in the same record")
            change()


def check_connection(path, keylog, brk_mode, pairs):
    meta = dict(line.rstrip("\n").split(" ", 1) for line in open(os.path.join(path, "meta.txt")))
    name = os.path.basename(path.rstrip("/"))
    caps = {}
    for d in ("c2s", "s2c"):
        with open(os.path.join(path, d + ".bin"), "rb") as f:
            caps[d] = records(f.read(), f"{name} {d}")
    ch = hello(caps["c2s"], 1, f"{name} c2s")
    client_random = ch[2:34]
    server_random, suite = server_hello(hello(caps["s2c"], 2, f"{name} s2c"), f"{name} s2c")
    secrets = keylog.get(client_random.hex())
    if not secrets:
        raise Failure(f"{name}: the key log has no line for client random {client_random.hex()}")
    tb_dir = "s2c" if meta["tlsbridge"] == "server" else "c2s"
    dirs = {}
    for d in ("c2s", "s2c"):
        brk = None
        if d == tb_dir and brk_mode:
            brk = brk_mode(name, suite)
        dirs[d] = Direction(f"{name} {d}{' (tlsbridge)' if d == tb_dir else ''}", suite, d == tb_dir, brk)
    tls13, kind, key_len, hash_name = SUITES[suite]
    if tls13:
        for d, side in (("c2s", "CLIENT"), ("s2c", "SERVER")):
            try:
                hs, app = secrets[side + "_HANDSHAKE_TRAFFIC_SECRET"], secrets[side + "_TRAFFIC_SECRET_0"]
            except KeyError as e:
                raise Failure(f"{name}: the key log lacks {e}") from None
            dirs[d].set_tls13(hs)
            dirs[d].on_finished = (lambda x, s: lambda: x.set_tls13(s))(dirs[d], app)
    else:
        if "CLIENT_RANDOM" not in secrets:
            raise Failure(f"{name}: the key log has no master secret")
        iv_len = 4 if kind == "gcm" else 12
        kb = prf12(hash_name, secrets["CLIENT_RANDOM"], b"key expansion", server_random + client_random,
                   2 * key_len + 2 * iv_len)
        keys12 = {"c2s": (kb[:key_len], kb[2 * key_len:2 * key_len + iv_len]),
                  "s2c": (kb[key_len:2 * key_len], kb[2 * key_len + iv_len:])}
    for d in ("c2s", "s2c"):
        dd, keyed = dirs[d], False
        for idx, (hdr, body) in enumerate(caps[d]):
            if tls13:
                keyed = hdr[0] == APPDATA or dd.opened > 0
            if not keyed:
                if hdr[0] == CCS:
                    if not tls13:
                        dd.set_tls12(*keys12[d])
                        keyed = True
                elif hdr[0] != HANDSHAKE:
                    raise Failure(f"{dd.name} record {idx}: type {hdr[0]} in the clear")
                continue
            dd.open(idx, hdr, body)
        if dd.hs:
            raise Failure(f"{dd.name}: {len(dd.hs)} bytes of an unfinished handshake message")
    tb, peer = dirs[tb_dir], dirs["c2s" if tb_dir == "s2c" else "s2c"]
    for dd, label, sent in ((tb, meta["label"], meta["sent"]), (peer, meta["peer_label"], meta["peer_sent"])):
        if len(dd.app) != int(sent):
            raise Failure(f"{dd.name}: {len(dd.app)} application bytes opened, {sent} sent")
        if bytes(dd.app) != stream(label, int(sent)):
            raise Failure(f"{dd.name}: the application bytes differ from what was sent")
    if tls13:
        asked = int(meta["updates_asked"])
        if tb.updates_requested < asked:
            raise Failure(f"{tb.name}: {tb.updates_requested} KeyUpdates asking for the peer's, {asked} asked for")
        # a SunJSSE peer re-keys on its own and asks for tlsbridge's: updates both ways, answers both ways
        if meta.get("peer", "sunjsse") == "sunjsse" and (tb.updates - tb.updates_requested < 1 or peer.updates < 1):
            raise Failure(f"{name}: KeyUpdates tlsbridge {tb.updates} ({tb.updates_requested} requesting),"
                          f" peer {peer.updates}: not both directions")
    limit = int(meta.get("key_limit", 0))
    if limit and tls13:
        check_key_limit(tb, peer, limit, len(tb.app), meta.get("peer") == "go")
    if tb.alerts != ["0100"] or tb.last_type != ALERT:
        raise Failure(f"{tb.name}: alerts {tb.alerts}, not one close_notify at the end")
    mine = {}
    for key, nonce, where in tb.pairs:
        seen = pairs.get((key, nonce)) or mine.get((key, nonce))
        if seen:
            raise Failure(f"{where}: (key, nonce) pair used twice, first by {seen}")
        mine[(key, nonce)] = where
    pairs.update(mine)
    return (f"{name}: {tb.opened} records of tlsbridge's opened ({tb.app_records} application,"
            f" {len(tb.app)} bytes), {peer.opened} of the peer's; KeyUpdates sent by tlsbridge {tb.updates}"
            f" ({tb.updates_requested} requesting), by the peer {peer.updates}"
            f"{f'; key limit {limit}: checked' if limit and tls13 else ''}"), \
        (tb.opened, peer.opened, len(tb.pairs), tb.updates, peer.updates, 1 if limit and tls13 else 0)


def check_key_limit(tb, peer, limit, sent, answers_each):
    """tlsbridge's KeyUpdates all came from its key limit: each key but the last protected exactly it."""
    per_key = tb.key_bytes[1:]  # the application keys
    want = max(0, -(-sent // limit) - 1)
    if tb.updates != want:
        raise Failure(f"{tb.name}: {tb.updates} KeyUpdates for {sent} bytes under a {limit}-byte key limit,"
                      f" {want} expected")
    if tb.updates_requested != tb.updates:
        raise Failure(f"{tb.name}: {tb.updates - tb.updates_requested} of its {tb.updates} KeyUpdates"
                      f" do not ask for the peer's")
    bad = [(i, n) for i, n in enumerate(per_key) if n != limit and (i < len(per_key) - 1 or not 0 < n <= limit)]
    if bad:
        raise Failure(f"{tb.name}: application key {bad[0][0]} protected {bad[0][1]} bytes, the limit is {limit}")
    if (peer.updates != tb.updates) if answers_each else not (0 < peer.updates <= tb.updates or tb.updates == 0):
        raise Failure(f"{peer.name}: {peer.updates} KeyUpdates answered {tb.updates} requests")


class Break:
    """One deliberate fault in tlsbridge's direction of the first connection it applies to."""

    def __init__(self, mode):
        self.mode, self.applied = mode, None

    def for_connection(self, name, suite):
        tls13, kind = SUITES[suite][0], SUITES[suite][1]
        if self.applied:
            return None
        if (self.mode == "skip-seq" and tls13) or (self.mode == "reuse-seq" and not tls13 and kind == "chacha") or \
                (self.mode == "repeat-nonce" and not tls13 and kind == "gcm"):
            self.applied = name
            return self
        return None

    def before(self, d, hdr, body):
        """The third application record: re-sealed with the second's explicit nonce."""
        if self.mode != "repeat-nonce" or hdr[0] != APPDATA:
            return body
        if d.app_records == 2:
            aad = d.seq.to_bytes(8, "big") + hdr[:3] + (len(body) - 8 - TAG).to_bytes(2, "big")
            plain = d.cipher.decrypt(d.iv + body[:8], body[8:], aad)
            body = d.last_explicit + d.cipher.encrypt(d.iv + d.last_explicit, plain, aad)
        d.last_explicit = body[:8]
        return body

    def after_app(self, d):
        """After the third application record the opener's sequence number goes wrong."""
        if self.mode in ("skip-seq", "reuse-seq") and d.app_records == 3:
            d.seq += 1 if self.mode == "skip-seq" else -1


def main(argv):
    brk = None
    if argv[:1] == ["--break"]:
        brk, argv = argv[1], argv[2:]
        if brk not in ("skip-seq", "reuse-seq", "repeat-nonce"):
            print(f"unknown break mode {brk}", file=sys.stderr)
            return 2
    keylog = {}
    for line in open(argv[0]):
        parts = line.split()
        if len(parts) == 3:
            keylog.setdefault(parts[1].lower(), {})[parts[0]] = bytes.fromhex(parts[2])
    pairs, failures, configs = {}, 0, {}
    fault = Break(brk) if brk else None
    for path in argv[1:]:
        try:
            line, counts = check_connection(path, keylog, fault and fault.for_connection, pairs)
            print("OPENED " + line)
            # flavour-role-bio-suite: the configuration is all but the suite
            config = " ".join(os.path.basename(path.rstrip("/")).rsplit("-", 3)[:3])
            configs[config] = [a + b for a, b in zip(configs.get(config, [0] * 7), (1,) + counts)]
        except Failure as e:
            failures += 1
            print(f"FAIL {e}")
    if fault and not fault.applied:
        print(f"FAIL --break {brk}: no connection it applies to")
        failures += 1
    total = [0] * 7
    for config, c in sorted(configs.items()):
        print(f"CONFIG {config:<30} {c[0]:2} connections: {c[1]:5} records of tlsbridge's opened, {c[3]:5} pairs"
              f" checked, {c[2]:5} of the peer's opened; KeyUpdates tlsbridge {c[4]}, peer {c[5]}"
              f"{f'; key limits checked on {c[6]}' if c[6] else ''}")
        total = [a + b for a, b in zip(total, c)]
    print(f"TOTAL connections {len(argv) - 1}, failed {failures}; records opened: {total[1]} sent by tlsbridge,"
          f" {total[2]} by its peers; (key, nonce) pairs checked: {total[3]}, distinct: {len(pairs)};"
          f" KeyUpdates: tlsbridge {total[4]}, peers {total[5]}; key limits checked on {total[6]} connections")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
