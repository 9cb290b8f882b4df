"""tlsbridge-probe (native/probe), attached for an extra pass per variant
on the probed cells: on-CPU time per request split by thread role the same
way for every provider (agnostic mode works on any process; provider mode
adds the library's own counters for TLSBridge), and the probe's own tax,
each probed pass paired with the plain repetition just before it."""

import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import threading
import time

import procs


def find(root):
    """The binary the top-level CMake build makes (<build>/native/probe/
    tlsbridge-probe): Maven's build dir target/native first, then a PATH or
    TB_PROBE override, then other build dirs."""
    cands = [os.environ.get("TB_PROBE", ""), os.path.join(root, "target/native/native/probe/tlsbridge-probe"),
             shutil.which("tlsbridge-probe") or ""]
    for pat in ("build*/native/probe/tlsbridge-probe", "target/*/native/probe/tlsbridge-probe"):
        cands += sorted(glob.glob(os.path.join(root, pat)))
    for c in cands:
        if c and os.access(c, os.X_OK) and os.path.isfile(c):
            return c, None
    if not os.path.exists(os.path.join(root, "native", "probe", "probe.c")):
        return None, "tlsbridge-probe is not in this tree"
    return None, ("tlsbridge-probe was not built (CMake skips it without clang/bpftool/libbpf-dev: see the "
                  "warning in target/bench-build.log)")


def usable(binary):
    """The probe needs root and a kernel with BTF; say so instead of failing
    every pass."""
    if os.geteuid() != 0:
        return "tlsbridge-probe needs root"
    if not os.access("/sys/kernel/btf/vmlinux", os.R_OK):
        return "this kernel exposes no BTF (/sys/kernel/btf/vmlinux)"
    return None


class Attached:
    """The probe attached to one PID for the length of one timed window:
    started before the window, waited for until its meta line says it is
    attached and calibrated, stopped with SIGINT right after the window."""

    def __init__(self, binary, pid, provider_mode, log_path, attach_timeout=30):
        modes = "provider,agnostic" if provider_mode else "agnostic"
        self.cmd = procs.pinned(procs.CLIENT_CPU, [binary, "-p", str(pid), "-i", "0", "--json", "--summary-only",
                                                   "--mode", modes])
        if not provider_mode:
            self.cmd.append("--any-process")  # nginx is not a JVM
        self.log = open(log_path, "ab")
        self.log.write(("$ " + " ".join(self.cmd) + "\n").encode())
        self.log.flush()
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=self.log)
        self.lines = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.ready.wait(attach_timeout)
        self.attached = self.ready.is_set() and self.p.poll() is None

    def _read(self):
        for raw in iter(self.p.stdout.readline, b""):
            ln = raw.decode("utf-8", "replace")
            self.lines.append(ln)
            if '"type":"meta"' in ln:
                self.ready.set()
        self.ready.set()

    def finish(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.reader.join(5)
        self.log.close()
        meta = summary = None
        for ln in self.lines:
            try:
                d = json.loads(ln)
            except ValueError:
                continue
            if d.get("type") == "meta":
                meta = d
            elif d.get("type") == "summary":
                summary = d
        return meta, summary


# Thread roles by name (comm, 15 characters): the same buckets for every
# server, so CPU per request splits the same way whatever the provider.
# JMH names its worker threads after the benchmark class
# (org.tlsbridge.bench.jmh...-jmh-worker-1, "org.tlsbridge.b" in comm).
ROLES = [
    ("JIT compiler", re.compile(r"^(C1|C2) CompilerThre")),
    ("GC + VM", re.compile(r"^(GC Thread|G1 |VM Thread|VM Periodic|ParGC|Monitor Deflati)")),
    ("request threads", re.compile(r"^(https?-|conn-|nginx|pool-|JSS|Thread-|main$|java$|org\.tlsbridge\.b)")),
]


def role(name):
    for r, pat in ROLES:
        if pat.search(name or ""):
            return r
    return "other"


def split(summary, requests):
    """Per-request figures from a probe summary."""
    if not summary or not requests:
        return None
    keys = ("on_cpu_ns", "probe_cpu_ns", "probe_bpf_ns", "probe_self_cpu_ns", "probe_target_est_ns", "handshakes",
            "closes", "resumed", "bytes_in", "bytes_out", "syscalls", "handshake_cpu_ns", "ssl_read_ns", "ssl_write_ns",
            "jni_calls", "context_switches_in", "elapsed_s", "lost_events")
    out = {k: summary.get(k) for k in keys if summary.get(k) is not None}
    per = {}
    for k in ("on_cpu_ns", "probe_cpu_ns", "probe_target_est_ns", "handshake_cpu_ns", "ssl_read_ns", "ssl_write_ns"):
        if summary.get(k) is not None:
            per[k.replace("_ns", "_ms_per_req")] = round(summary[k] / 1e6 / requests, 5)
    for k in ("syscalls", "jni_calls", "handshakes", "context_switches_in"):
        if summary.get(k) is not None:
            per[k + "_per_req"] = round(summary[k] / requests, 3)
    if summary.get("handshakes") and summary.get("handshake_cpu_ns") is not None:
        # the library's clock around SSL_do_handshake: wall time, so a
        # handshake preempted on a busy CPU counts its wait too
        per["handshake_ms_each"] = round(summary["handshake_cpu_ns"] / 1e6 / summary["handshakes"], 4)
    roles = {}
    for t in summary.get("threads") or []:
        r = role(t.get("name"))
        roles[r] = roles.get(r, 0) + t.get("on_cpu_ns", 0)
    per["by_role_ms_per_req"] = {r: round(ns / 1e6 / requests, 5) for r, ns in sorted(roles.items())}
    top = sorted((summary.get("syscalls_by_name") or {}).items(), key=lambda kv: -kv[1])[:6]
    per["top_syscalls_per_req"] = {k: round(v / requests, 3) for k, v in top}
    out["per_request"] = per
    out["protocols"] = summary.get("protocols")
    out["suites"] = summary.get("suites")
    return out


def tax(pairs):
    """pairs: [(plain rep, probed rep)] of one variant, each probed pass run
    right after the plain one. Medians of the per-pair ratios."""
    rps = [b["req_per_s"] / a["req_per_s"] for a, b in pairs if a.get("req_per_s") and b.get("req_per_s")]
    cpu = [b["cpu_ms_per_req"] / a["cpu_ms_per_req"] for a, b in pairs
           if a.get("cpu_ms_per_req") and b.get("cpu_ms_per_req")]
    return {"pairs": len(pairs),
            "throughput_ratio": round(statistics.median(rps), 4) if rps else None,
            "server_cpu_per_req_ratio": round(statistics.median(cpu), 4) if cpu else None}


def run_pass(binary, handle, measure_one, log_path):
    """One probed pass: attach, one timed window (measure_one()), detach."""
    is_tb = handle.variant.provider == "TLSBridge"
    pid = procs.busiest(handle.proc.pid)
    a = Attached(binary, pid, is_tb, log_path)
    if not a.attached:
        a.finish()
        return {"ok": False, "command": a.cmd, "error": "the probe did not attach (see logs/probe.log)"}
    t0 = time.monotonic()
    rep, _ = measure_one()
    # the server closes its side just after the client's last request: the
    # library reports a connection's totals when it frees it
    time.sleep(0.5)
    meta, s = a.finish()
    return {"ok": s is not None, "command": a.cmd, "pid": pid, "rep": rep, "window_s": round(time.monotonic() - t0, 2),
            "calibration": (meta or {}).get("calibration"), "summary": split(s, rep.get("requests")),
            "error": None if s else "no summary from the probe (see logs/probe.log)"}
