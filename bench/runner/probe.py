"""tlsbridge-probe (issue 6), attached for one extra pass per variant:
on-CPU time per request measured the same way for every provider, and the
probe's own cost."""

import glob
import json
import os
import shutil
import subprocess
import time


def find(root):
    cands = [os.environ.get("TB_PROBE", ""), shutil.which("tlsbridge-probe") or ""]
    for pat in ("target/native/native/probe/tlsbridge-probe", "target/bench-probe/native/probe/tlsbridge-probe",
                "build/native/probe/tlsbridge-probe", "target/native/**/tlsbridge-probe"):
        cands += glob.glob(os.path.join(root, pat), recursive=True)
    for c in cands:
        if c and os.access(c, os.X_OK) and os.path.isfile(c):
            return c, None
    if not os.path.exists(os.path.join(root, "native", "probe", "probe.c")):
        return None, "tlsbridge-probe is not in this build (issue 6 not merged yet)"
    return None, "tlsbridge-probe sources exist but no binary was built (scripts/bench builds it with TB_BUILD_PROBE=ON)"


class Attached:
    def __init__(self, binary, pid, seconds, provider_mode, log_path):
        modes = "provider,agnostic" if provider_mode else "agnostic"
        self.cmd = ["taskset", "-c", "0", binary, "-p", str(pid), "-d", str(int(seconds) + 1), "-i", "0",
                    "--json", "--summary-only", "--mode", modes]
        if not provider_mode:
            self.cmd.append("--any-process")
        self.log = open(log_path, "ab")
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=self.log)
        time.sleep(1.5)  # attach + calibration before the timed window

    def finish(self):
        try:
            out, _ = self.p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.terminate()
            out, _ = self.p.communicate()
        self.log.close()
        summary = None
        for ln in out.decode("utf-8", "replace").splitlines():
            try:
                d = json.loads(ln)
            except ValueError:
                continue
            if d.get("type") == "summary":
                summary = d
        return summary


def split(summary, requests):
    """Per-request figures from a probe summary."""
    if not summary or not requests:
        return None
    keys = ("on_cpu_ns", "probe_cpu_ns", "handshakes", "resumed", "bytes_in", "bytes_out", "syscalls",
            "handshake_cpu_ns", "ssl_read_ns", "ssl_write_ns", "jni_calls", "context_switches_in")
    out = {k: summary.get(k) for k in keys if summary.get(k) is not None}
    per = {}
    for k in ("on_cpu_ns", "probe_cpu_ns", "handshake_cpu_ns", "ssl_read_ns", "ssl_write_ns"):
        if summary.get(k) is not None:
            per[k.replace("_ns", "_ms_per_req")] = round(summary[k] / 1e6 / requests, 4)
    for k in ("syscalls", "jni_calls", "handshakes"):
        if summary.get(k) is not None:
            per[k + "_per_req"] = round(summary[k] / requests, 3)
    out["per_request"] = per
    out["protocols"] = summary.get("protocols")
    out["suites"] = summary.get("suites")
    return out
