#!/usr/bin/env python3
"""Syscalls per keep-alive request and per new connection on the server side,
counted with strace, for BenchmarkSSLSocket over tlsbridge's native socket,
the same benchmark over SunJSSE's SSLServerSocket, and nginx.

Counts, not times: the figure is deterministic enough to compare on a shared
machine where CPU timings are not. For each server and scenario, strace
attaches to the warmed-up server, a fixed client (curl, one process, HTTP/1.1,
1 KiB responses, paced: see RATE) runs N and then 2N requests, and the per-request figure is
(count(2N) - count(N)) / N, so the attach/detach edges and anything that
happens once per run cancel out.

Only the threads that serve count: for a JVM, every thread except the JVM's
own (GC, JIT compilers, VM thread, ...; named in JVM_THREADS), whose work
depends on time and allocation rather than on requests; the thread-per-
connection threads BenchmarkSSLSocket starts are counted, so thread creation
is part of the Java servers' per-connection cost (nginx has none). For nginx,
its one worker process.

  bench/runner/syscalls.py [--n 200] [--servers tlsbridge,sunjsse,nginx] [--json FILE]

Needs strace, curl, nginx (optional) and a built checkout (mvn package).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pki  # noqa: E402
import procs  # noqa: E402
import variants  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SUITE = "TLS_AES_128_GCM_SHA256"
SIZE = 1024
JVM_THREADS = re.compile(r"^(GC Thread|G1 |VM Thread|VM Periodic|C1 Compiler|C2 Compiler|Signal Dispatch|Finalizer|"
                         r"Reference Handl|Common-Cleaner|Service Thread|Notification Th|Monitor Deflat|Sweeper|"
                         r"Attach Listener|ParGC|PSYoung|VM Operation|benchmark-admin|process reaper|"
                         r"Thread-\d+$|tlsbridge-clean|Cleaner)")
# Paced requests: each one reaches a server that is idle and waiting, as on a
# keep-alive connection between a client's requests. Unpaced, strace slows the
# server enough that the next request is often already queued when it reads,
# and the count then depends on timing.
RATE = {False: 200, True: 50}
LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")


def run_quiet(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


class Server:
    def __init__(self, name):
        self.name = name
        self.proc = None
        self.tmp = tempfile.mkdtemp(prefix=f"tb-syscalls-{name}-")
        os.chmod(self.tmp, 0o755)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


class JavaServer(Server):
    def __init__(self, name, impl, pkidir):
        super().__init__(name)
        cp = run_quiet([os.path.join(ROOT, "bench", "sslsocket", "build.sh")], check=True).stdout.strip().splitlines()[-1]
        cmd = ["java", *variants.JVM_FLAGS, "-cp", cp, "BenchmarkSSLSocket", impl,
               os.path.join(pkidir, "ec.p12"), pki.PASSWORD, "0", str(SIZE)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(os.path.join(self.tmp, "stderr"), "w"), text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("LISTENING"):
            raise RuntimeError(f"{impl} did not start: {line!r} "
                               + open(os.path.join(self.tmp, "stderr")).read()[-1500:])
        self.port = int(line.split()[2])
        # NEGOTIATED lines must not fill the pipe
        subprocess.Popen(["cat"], stdin=self.proc.stdout, stdout=subprocess.DEVNULL)

    def pid(self):
        return self.proc.pid

    def counted(self, tid, comm):
        return not JVM_THREADS.match(comm or "")


class NginxServer(Server):
    def __init__(self, pkidir):
        super().__init__("nginx")
        www = os.path.join(self.tmp, "www")
        os.makedirs(www)
        os.chmod(www, 0o755)
        with open(os.path.join(www, str(SIZE)), "wb") as f:
            f.write(b"a" * SIZE)
        self.port = procs.free_port()
        tls = (f"        ssl_certificate {pkidir}/ec.crt;\n        ssl_certificate_key {pkidir}/ec.pk8.pem;\n"
               f"        ssl_protocols TLSv1.3;\n        ssl_conf_command Ciphersuites {SUITE};\n"
               "        ssl_session_cache shared:tb:10m;\n        ssl_session_tickets on;\n")
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(variants.NGINX_CONF.format(d=self.tmp, port=self.port, ssl=" ssl", tls=tls))
        self.proc = subprocess.Popen(["/usr/sbin/nginx", "-p", self.tmp, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not procs.wait_port(self.port, 20, self.proc):
            raise RuntimeError("nginx did not listen")
        time.sleep(0.3)

    def pid(self):
        kids = [p for p in procs.tree(self.proc.pid) if p != self.proc.pid]
        return kids[0]

    def counted(self, tid, comm):
        return True


def curl(port, n, newconn, rate=None):
    url = f"https://127.0.0.1:{port}/{SIZE}?[1-{n}]"
    cmd = ["curl", "-sk", "--http1.1", "--tlsv1.3", "--tls13-ciphers", SUITE, "--max-time", "300",
           "-o", "/dev/null", "-w", "%{http_code}\\n"]
    if rate:
        cmd += ["--rate", f"{rate}/s"]
    if newconn:
        cmd += ["-H", "Connection: close", "--no-sessionid"]
    r = run_quiet(cmd + [url], timeout=320)
    codes = r.stdout.split()
    if len(codes) != n or any(c != "200" for c in codes):
        raise RuntimeError(f"curl: {len([c for c in codes if c == '200'])}/{n} answers were 200: {r.stdout[-300:]}")


def tasks(pid):
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                out[int(t)] = f.read().strip()
        except OSError:
            pass
    return out


def traced(server, n, newconn):
    """{syscall: count} in the counted threads while curl makes n requests."""
    pid = server.pid()
    before = tasks(pid)
    log = os.path.join(server.tmp, "strace.out")
    err = os.path.join(server.tmp, "strace.err")
    st = subprocess.Popen(["strace", "-f", "-o", log, "-p", str(pid)], stderr=open(err, "w"))
    end = time.monotonic() + 30
    while time.monotonic() < end:  # attached to every thread before the client starts
        with open(err) as f:
            text = f.read()
        if "attached with" in text or text.count("attached") >= len(before):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    try:
        curl(server.port, n, newconn, RATE[newconn])
        time.sleep(0.3)  # the last connection's close
    finally:
        st.send_signal(signal.SIGINT)
        st.wait(30)
    counts = {}
    skipped = 0
    with open(log) as f:
        for line in f:
            m = LINE.match(line)
            if not m or m.group(2):  # a resumed half was counted when it started
                continue
            tid = int(m.group(1))
            if tid in before and not server.counted(tid, before[tid]):
                skipped += 1
                continue
            counts[m.group(3)] = counts.get(m.group(3), 0) + 1
    counts["(excluded JVM threads)"] = skipped
    return counts


def per_request(server, n, newconn):
    a = traced(server, n, newconn)
    b = traced(server, 2 * n, newconn)
    return {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}


def total(per_scenario):
    """Syscalls per request of one server and scenario, {syscall: count};
    keys in parentheses (the JVM's own threads) are shown, never counted."""
    return sum(v for k, v in per_scenario.items() if not k.startswith("("))


def table(results, scenario):
    cols = list(results)
    kinds = sorted({k for r in results.values() for k in r[scenario] if not k.startswith("(")},
                   key=lambda k: -max(results[c][scenario].get(k, 0) for c in cols))
    lines = [f"| {scenario} per request | " + " | ".join(cols) + " |", "| --- |" + " ---: |" * len(cols)]
    for k in kinds:
        vals = [results[c][scenario].get(k, 0) for c in cols]
        if all(abs(v) < 0.005 for v in vals):
            continue
        lines.append(f"| {k} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    tot = [total(results[c][scenario]) for c in cols]
    lines.append("| **total** | " + " | ".join(f"**{v:.2f}**" for v in tot) + " |")
    ex = [results[c][scenario].get("(excluded JVM threads)", 0) for c in cols]
    lines.append("| (JVM threads, not counted) | " + " | ".join(f"{v:.2f}" for v in ex) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="requests in the short run (the long one makes 2N)")
    ap.add_argument("--servers", default="tlsbridge,sunjsse,nginx")
    ap.add_argument("--warmup", type=int, default=2000, help="keep-alive requests before counting (JIT, classes)")
    ap.add_argument("--json", help="also write the per-request figures here")
    a = ap.parse_args()
    for tool in ("strace", "curl"):
        if not shutil.which(tool):
            sys.exit(f"syscalls.py: {tool} is not installed")
    pkidir = pki.make(os.path.join(ROOT, "target", "syscalls-pki"))
    results = {}
    for name in a.servers.split(","):
        if name == "nginx" and not os.path.exists("/usr/sbin/nginx"):
            print("syscalls.py: NOT COUNTED nginx: /usr/sbin/nginx is not installed", file=sys.stderr)
            continue
        s = {"tlsbridge": lambda: JavaServer("tlsbridge", "TLSBridge.SSLSocket", pkidir),
             "sunjsse": lambda: JavaServer("sunjsse", "SunJSSE.SSLSocket", pkidir),
             "nginx": lambda: NginxServer(pkidir)}[name]()
        try:
            curl(s.port, a.warmup, False)
            curl(s.port, max(50, a.warmup // 10), True)
            results[name] = {"keep-alive": per_request(s, a.n, False), "new connection": per_request(s, a.n, True)}
        finally:
            s.stop()
        print(f"counted {name}", file=sys.stderr)
    print(f"Server syscalls per request (strace; curl, HTTP/1.1, TLS 1.3 {SUITE}, ECDSA P-256, {SIZE} B; "
          f"(count(2N) - count(N)) / N, N = {a.n}; new connection = Connection: close, no resumption)\n")
    for scenario in ("keep-alive", "new connection"):
        print(table(results, scenario))
        print()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"n": a.n, "suite": SUITE, "size": SIZE, "per_request": results}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
