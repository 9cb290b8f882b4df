"""Certificates for every server: a CA, an RSA-2048 and an ECDSA P-256 server
certificate for 127.0.0.1/localhost, as PEM, PKCS#12 (password m1oZilla, the
one JSS's BenchmarkSSLSocket defaults to) and an NSS database for JSS."""

import os
import subprocess

PASSWORD = "m1oZilla"


def _run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)


def make(dirpath):
    os.makedirs(dirpath, exist_ok=True)
    p = lambda n: os.path.join(dirpath, n)  # noqa: E731
    if os.path.exists(p("done")):
        return dirpath
    _run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
          "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "30", "-subj", "/CN=tlsbridge bench CA",
          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    with open(p("ext.cnf"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for kind, alg in (("rsa", ["-newkey", "rsa:2048"]), ("ec", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])):
        _run(["openssl", "req", "-new", *alg, "-nodes", "-keyout", p(f"{kind}.key"), "-out", p(f"{kind}.csr"),
              "-subj", f"/O=tlsbridge bench/OU={kind}/CN=localhost"])
        _run(["openssl", "x509", "-req", "-in", p(f"{kind}.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"),
              "-CAcreateserial", "-out", p(f"{kind}.crt"), "-days", "30", "-extfile", p("ext.cnf")])
        # PKCS#8 key, what every Java and C server here reads
        _run(["openssl", "pkcs8", "-topk8", "-nocrypt", "-in", p(f"{kind}.key"), "-out", p(f"{kind}.pk8.pem")])
        with open(p(f"{kind}.chain.pem"), "w") as out:
            out.write(open(p(f"{kind}.crt")).read())
            out.write(open(p("ca.pem")).read())
        _run(["openssl", "pkcs12", "-export", "-in", p(f"{kind}.crt"), "-inkey", p(f"{kind}.key"),
              "-certfile", p("ca.pem"), "-name", "server", "-out", p(f"{kind}.p12"),
              "-passout", f"pass:{PASSWORD}"])
    open(p("done"), "w").close()
    return dirpath


def nss_db(dirpath):
    """An NSS database (for JSS) with both server keys, nicknames
    Server_RSA and Server_EC as in JSS's own benchmark; needs certutil and
    pk12util (libnss3-tools). Returns the database directory."""
    db = os.path.join(dirpath, "nssdb")
    if os.path.exists(os.path.join(db, "done")):
        return db
    os.makedirs(db, exist_ok=True)
    _run(["certutil", "-N", "-d", f"sql:{db}", "--empty-password"])
    _run(["certutil", "-A", "-d", f"sql:{db}", "-n", "CA", "-t", "CT,C,C", "-i", os.path.join(dirpath, "ca.pem")])
    for kind, nick in (("rsa", "Server_RSA"), ("ec", "Server_EC")):
        p12 = os.path.join(dirpath, f"{kind}-nss.p12")
        _run(["openssl", "pkcs12", "-export", "-in", os.path.join(dirpath, f"{kind}.crt"),
              "-inkey", os.path.join(dirpath, f"{kind}.key"), "-name", nick, "-out", p12,
              "-passout", f"pass:{PASSWORD}"])
        _run(["pk12util", "-i", p12, "-d", f"sql:{db}", "-W", PASSWORD, "-K", ""])
    open(os.path.join(db, "done"), "w").close()
    return db
