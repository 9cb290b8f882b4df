"""The Netty servers of the full run, started the way the runner starts them
(the quick run has none): each serves GET /N as N bytes over TLS 1.3
AES-128-GCM (curl with the cell's suite pin), says which engine serves it,
and the runner's check takes that account for its own engine. Prints one
line per check and NETTY <passed> <failed>; needs bench/netty built
(scripts/bench builds it) and says NOT AVAILABLE otherwise."""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "runner"))
import pki  # noqa: E402
import suites  # noqa: E402
import variants  # noqa: E402

from checks import check, finish  # noqa: E402


work = tempfile.mkdtemp(prefix="tb-netty-check.")
jar = [j for j in sorted(glob.glob(os.path.join(ROOT, "target", "tlsbridge-*.jar")))
       if not j.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
ctx = variants.Ctx(ROOT, work, pki.make(os.path.join(work, "pki")), os.environ.get("TB_JAVA17") or shutil.which("java"),
                   None, jar[0] if jar else None)
suite = suites.BY_KEY["t13-aes128"]
nv = [v for v in variants.all_variants() if isinstance(v, variants.Netty)]
if not ctx.netty_cp:
    print("     NOT AVAILABLE: the Netty servers (bench/netty is not built: scripts/bench builds it)")
for v in nv if ctx.netty_cp else []:
    h = None
    try:
        h = v.start(ctx, suite)
        env = dict(os.environ, **(h.client_env or {}))
        r = subprocess.run(["curl", "-sk", "--tlsv1.3", "--tls13-ciphers", suite.openssl, "-o", "-", "-w", "\n%{http_code}",
                            f"https://127.0.0.1:{h.port}/1000"], capture_output=True, text=True, timeout=30, env=env)
        body, _, code = r.stdout.rpartition("\n")
        check(f"{v.name}: GET /1000 answers 200 with 1000 bytes of 'a'", code == "200" and body == "a" * 1000,
              (code, len(body), r.stderr[-200:]))
        ver = h.verification(None, suite)
        check(f"{v.name}: served by {v.provider} ({(ver.get('provider') or {}).get('engine')}), TLS 1.3 AES-128-GCM "
              "by the server's own account", ver.get("ok") and ver.get("provider"), ver)
        others = [o for o in nv if o is not v]
        check(f"{v.name}: its account is not taken for another Netty server's engine",
              all(o.wrong_engine(ver.get("provider")) for o in others))
    except Exception as e:  # a server that did not start is a failure, named
        check(f"{v.name}: starts and serves", False, e)
    finally:
        if h:
            h.stop()
shutil.rmtree(work, ignore_errors=True)
finish("NETTY")
