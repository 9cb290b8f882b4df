"""A TLS 1.3 server that asks for the client's certificate after the
handshake (post-handshake authentication), for PhaSocketTest. One
connection per line the client sends first:
  "pha"    -> CertificateRequest, "requested", then on the client's next
              line reports "peer=<subject>" or "peer=none"
  "silent" -> CertificateRequest, "waiting", then nothing until the client
              leaves (a client that cannot get past the request never
              sees "waiting")
Usage: pha_server.py CERT KEY CA; prints "PORT <n>" once listening."""
import socket
import ssl
import sys
import threading


def subject(cert):
    if not cert:
        return "none"
    return ",".join("%s=%s" % kv for rdn in cert["subject"] for kv in rdn)


def serve(ctx, raw):
    with ctx.wrap_socket(raw, server_side=True) as s:
        f = s.makefile("rwb", buffering=0)
        cmd = f.readline().strip()
        s.verify_client_post_handshake()
        s.do_handshake()  # sends the CertificateRequest now
        if cmd == b"pha":
            s.sendall(b"requested\n")
            f.readline()  # reading the client's line reads its Certificate first
            s.sendall(("peer=%s\n" % subject(s.getpeercert())).encode())
            f.readline()
        else:
            s.sendall(b"waiting\n")
            while s.recv(1024):
                pass


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(sys.argv[1], sys.argv[2])
    ctx.load_verify_locations(sys.argv[3])
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.post_handshake_auth = True  # no CertificateRequest in the handshake itself
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    print("PORT %d" % ls.getsockname()[1], flush=True)
    while True:
        raw, _ = ls.accept()
        threading.Thread(target=lambda: guarded(ctx, raw), daemon=True).start()


def guarded(ctx, raw):
    try:
        serve(ctx, raw)
    except (OSError, ssl.SSLError) as e:
        print("connection failed: %r" % e, flush=True)


if __name__ == "__main__":
    main()
