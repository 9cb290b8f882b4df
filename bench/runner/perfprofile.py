"""Flat CPU profiles of a server under a cell's load, with perf (Debian's
linux-perf): where the server's time goes, per DSO (kernel, libcrypto,
libssl, libtlsbridge, JIT-compiled Java, libjvm, libc) and per symbol.
Taken for the cells of every missed target and for tlsbridge's own Tomcat
cells, outside the timed repetitions (sampling adds a little cost)."""

import os
import re
import shutil
import signal
import subprocess

import rules
import procs
from probe import role as probe_role

BUCKETS = ["kernel", "libcrypto", "libssl", "libtlsbridge", "peer's TLS library", "JIT (Java)", "libjvm", "libc",
           "server binary", "other"]



def available():
    perf = shutil.which("perf")
    if not perf:
        return None, "perf is not installed (apt: linux-perf)"
    try:
        p = subprocess.run([perf, "record", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"],
                           capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"perf record failed: {e}"
    if p.returncode != 0:
        return None, "perf record failed: " + p.stderr.decode(errors="replace").strip()[-300:]
    return perf, None


def bucket(dso):
    d = dso.lower()
    if d.startswith("[kernel") or d in ("[vdso]", "[vsyscall]") or d.endswith(".ko"):
        return "kernel"
    if d.startswith("[jit]") or d.startswith("perf-") or d.startswith("jitted-"):
        return "JIT (Java)"
    for lib, b in (("libcrypto", "libcrypto"), ("libssl", "libssl"), ("libtlsbridge", "libtlsbridge"),
                   ("libjvm", "libjvm"), ("libc.so", "libc"), ("libc-", "libc"), ("ld-linux", "libc"),
                   ("libpthread", "libc"),
                   # the peers' own libraries (netty-tcnative, Conscrypt, ACCP, wildfly-openssl): BoringSSL
                   # and AWS-LC are linked into them, so their handshakes and ciphers run there
                   ("netty_tcnative", "peer's TLS library"), ("conscrypt", "peer's TLS library"),
                   ("amazoncorrettocryptoprovider", "peer's TLS library"), ("wfssl", "peer's TLS library")):
        if lib in d:
            return b
    if d in ("nginx", "java"):
        return "server binary"
    return "other"


# A library unlinked after loading shows as "(/tmp/lib....so (deleted))":
# netty-tcnative, Conscrypt and ACCP unpack theirs to a temporary file and
# delete it, and a pattern that missed the suffix dropped all their samples.
_SAMPLE = re.compile(r"^\s*(.*?)\s+(\d+)/(\d+)\s+([0-9a-f]+)\s+(.*?)\s+\(([^()]*?)(?: \(deleted\))?\)\s*$")


def _samples(perf, data, pid):
    """Counts of one process's samples per thread name, per DSO and per
    (DSO, symbol). perf report's --pid filter is applied to whole histogram
    entries, which drops a DSO's samples when another process's sample
    created the entry first: the samples are read one by one instead."""
    p = subprocess.run(procs.pinned(procs.CLIENT_CPU, [perf, "script", "-i", data, "-F", "comm,pid,tid,ip,sym,dso"]),
                       capture_output=True, timeout=180)
    comms, dsos, syms = {}, {}, {}
    for ln in p.stdout.decode("utf-8", "replace").splitlines():
        m = _SAMPLE.match(ln)
        if not m or int(m.group(2)) != pid:
            continue
        comm, dso, sym = m.group(1).strip(), os.path.basename(m.group(6)) or "[unknown]", m.group(5).strip()
        if dso.startswith("perf-") and dso.endswith(".map"):
            dso = "[JIT]"
        comms[comm] = comms.get(comm, 0) + 1
        dsos[dso] = dsos.get(dso, 0) + 1
        syms[(dso, sym)] = syms.get((dso, sym), 0) + 1
    order = lambda d: sorted(((n, k) for k, n in d.items()), key=lambda x: -x[0])  # noqa: E731
    return order(comms), order(dsos), order(syms)


def start(perf, data, seconds):
    """perf record CPU-wide on the server's CPU for at most `seconds` (a
    per-process recording misses the threads that a thread-per-connection
    server creates meanwhile); the server's samples are picked out later."""
    cmd = procs.pinned(procs.CLIENT_CPU, [perf, "record", "-q", "-e", "cpu-clock", "-F", "999",
                                          "-C", procs.SERVER_CPU, "-o", data, "--", "sleep", str(seconds)])
    return cmd, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(p, timeout, stop=False):
    if stop and p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    return p.returncode, (err or b"").decode(errors="replace")[-300:]


def record(perf, handle, java_bin, seconds, measure_one, outdir, tag):
    """A profile of a running server while measure_one() drives the cell's
    load. JIT-compiled Java gets names from the JVM's perf map (jcmd
    Compiler.perfmap, JDK 17+)."""
    os.makedirs(outdir, exist_ok=True)
    pid = procs.busiest(handle.proc.pid)
    data = os.path.join(outdir, tag + ".data")
    cmd, p = start(perf, data, seconds)
    rep, _ = measure_one()
    rc, err = finish(p, seconds + 90)
    if rc != 0 or not os.path.exists(data):
        return {"ok": False, "command": cmd, "error": err or "perf did not finish"}
    if java_bin and handle.proc.alive():
        jcmd = os.path.join(os.path.dirname(java_bin), "jcmd")
        subprocess.run(procs.pinned(procs.CLIENT_CPU, [jcmd, str(pid), "Compiler.perfmap"]), capture_output=True,
                       timeout=60)
    r = analyze(perf, data, pid, rep.get("cpu_ms_per_req"), outdir, tag,
                f"window: {rep.get('requests')} requests, {rep.get('cpu_ms_per_req')} ms CPU/request"
                + jit_note(rep.get("jit_share")))
    r.update({"command": cmd, "rep": rep, "jit_share": rep.get("jit_share")})
    return r


def jit_note(share):
    """The header's word on the JIT in the profiled window (from /proc, not
    the samples): a profile taken while C1/C2 compiled shows compilation,
    not the steady server."""
    if share is None:
        return ""
    note = f"; JIT compiler threads {100 * share:.1f}% of the process's CPU"
    return note + (" -- STILL COMPILING: not a steady-state profile" if not rules.jit_quiet(share) else "")


def analyze(perf, data, pid, cpu_ms_per_unit, outdir, tag, header):
    """Flat profile of pid's samples in data: shares per DSO bucket, thread
    role and symbol; the per-bucket CPU per request (or per operation) is the
    share times cpu_ms_per_unit. Writes <outdir>/<tag>.txt."""
    comms, dsos, syms = _samples(perf, data, pid)
    if os.environ.get("TB_BENCH_KEEP_PERF") != "1":
        os.remove(data)
        # the JVM's perf map (jcmd Compiler.perfmap / DumpPerfMapAtExit)
        # is only needed to read this profile
        jmap = f"/tmp/perf-{pid}.map"
        if os.path.exists(jmap):
            os.remove(jmap)
    total = sum(n for n, _ in dsos)
    if not total:
        return {"ok": False, "error": f"no samples of pid {pid} on CPU {procs.SERVER_CPU}"}
    buckets, roles = {}, {}
    for n, dso in dsos:
        buckets[bucket(dso)] = buckets.get(bucket(dso), 0) + n
    for n, comm in comms:
        roles[probe_role(comm)] = roles.get(probe_role(comm), 0) + n
    top = [{"pct": round(100.0 * n / total, 2), "dso": dso, "bucket": bucket(dso), "symbol": sym[:160]}
           for n, (dso, sym) in syms[:25]]
    with open(os.path.join(outdir, tag + ".txt"), "w") as f:
        f.write(f"# perf record -e cpu-clock -F 999 -C {procs.SERVER_CPU}; perf script, samples of pid {pid}\n"
                f"# {total} samples; {header}\n\n# thread roles\n")
        f.writelines(f"{100.0 * n / total:6.2f}%  {k}\n" for k, n in sorted(roles.items(), key=lambda kv: -kv[1]))
        for title, rows, lim in (("threads (top 10)", comms[:10], 0), ("shared objects", dsos, 0.1),
                                 ("symbols", [(n, f"{d:24} {y}") for n, (d, y) in syms], 0.2)):
            f.write(f"\n# {title}\n")
            f.writelines(f"{100.0 * n / total:6.2f}%  {k}\n" for n, k in rows if 100.0 * n / total >= lim)
    pct = {b: round(100.0 * buckets.get(b, 0) / total, 2) for b in BUCKETS if buckets.get(b)}
    return {"ok": True, "pid": pid, "samples": total, "buckets_pct": pct,
            "buckets_ms_per_req": {b: round(v / 100.0 * cpu_ms_per_unit, 6) for b, v in pct.items()}
            if cpu_ms_per_unit else {},
            "threads_pct": {r: round(100.0 * n / total, 2) for r, n in sorted(roles.items(), key=lambda kv: -kv[1])},
            "top": top,
            "text": os.path.relpath(os.path.join(outdir, tag + ".txt"), os.path.dirname(os.path.dirname(outdir)))}
