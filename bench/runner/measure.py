"""One measurement: drive a running server with the cell's client for the
timed window, sample the server's CPU before and after, verify what it
negotiated."""

import statistics
import time

import loadgen
import procs
import suites as S
import verify


def client_for(mode):
    return {"keepalive": "wrk", "resumed": "wrk (Connection: close)", "newconn": "siege"}[mode]


def drive(handle, mode, size, seconds, opts, workdir, suite):
    url = f"{handle.url_base}/{size}"
    env = handle.client_env
    if mode == "keepalive":
        return loadgen.wrk(workdir, url, seconds, opts.connections, env=env)
    if mode == "resumed":
        return loadgen.wrk(workdir, url, seconds, opts.connections, close=True, env=env)
    ciphers = suite.openssl if suite.protocol == "TLSv1.2" else None
    # the rate this server last sustained sizes the next run (loadgen.siege)
    r = loadgen.siege(workdir, url, seconds, opts.concurrency, ciphers, rate=getattr(handle, "siege_rate", None),
                      env=env)
    if getattr(r, "rate", None):
        handle.siege_rate = r.rate
    return r


def one(handle, mode, size, seconds, opts, workdir, suite):
    before = handle.snapshot()
    jit0 = handle.jit()
    cpu0 = handle.cpu()
    busy0, steal0 = procs.cpu_busy(procs.SERVER_CPU)
    t0 = time.monotonic()
    r = drive(handle, mode, size, seconds, opts, workdir, suite)
    wall = time.monotonic() - t0
    cpu = handle.cpu() - cpu0
    jit = procs.jit_seconds(jit0, handle.jit() or {}) if jit0 is not None else None
    busy1, steal1 = procs.cpu_busy(procs.SERVER_CPU)
    # time on the server's CPU used by anything else (other engineers'
    # builds, the hypervisor): a contended cell is flagged, not trusted
    others = max(0.0, (busy1 - busy0) - cpu)
    alive = handle.proc.alive()
    v = handle.verification(before, suite) if alive else {"ok": False, "error": "server died"}
    n = r.requests
    rep = {
        "requests": n,
        "seconds": round(r.wall, 3),
        "req_per_s": round(n / r.wall, 1) if r.wall else 0.0,
        "mb_per_s": round(n * size / r.wall / 1e6, 3) if r.wall else 0.0,
        "server_cpu_s": round(cpu, 3),
        "cpu_ms_per_req": round(cpu * 1000.0 / n, 4) if n else None,
        "cpu_ms_per_mb": round(cpu * 1000.0 / (n * size / 1e6), 3) if n else None,
        "server_util": round(cpu / wall, 3) if wall else None,
        # the JIT compiler threads' part of server_cpu_s (JVM servers): a
        # window that compiled measured compilation too (rules.agreed)
        "jit_cpu_s": round(jit, 3) if jit is not None else None,
        "jit_share": round(min(1.0, jit / cpu), 4) if jit is not None and cpu > 0 else None,
        "client_cpu_s": round(r.client_cpu, 3),
        "others_on_server_cpu": round(others / wall, 3) if wall else None,
        "steal": round((steal1 - steal0) / wall, 3) if wall else None,
        "client_util": round(r.client_cpu / r.wall, 3) if r.wall else None,
        "errors": sum(r.errors.values()),
        "error_kinds": r.errors,
        "p50_ms": r.p50_ms,
        "p99_ms": r.p99_ms,
        "verified": v,
    }
    if hasattr(r, "mean_ms"):
        rep["mean_ms"] = round(r.mean_ms, 3)
    if not alive:
        rep["server_died"] = True
    if r.raw and isinstance(r.raw, str):
        rep["client_output"] = r.raw
    return rep, r.cmd


STATS = ("req_per_s", "mb_per_s", "cpu_ms_per_req", "cpu_ms_per_mb", "p50_ms", "p99_ms", "server_util",
         "client_util", "errors")


def summarize(reps, stats=STATS):
    out = {"median": {}, "min": {}, "max": {}}
    for k in stats:
        vals = [r[k] for r in reps if r.get(k) is not None]
        if vals:
            out["median"][k] = round(statistics.median(vals), 4)
            out["min"][k] = min(vals)
            out["max"][k] = max(vals)
    return out


def bottleneck(reps):
    """Who limited the cell: the client (its one CPU saturated while the
    server's was not) or the server."""
    cu = statistics.median([r["client_util"] or 0 for r in reps]) if reps else 0
    su = statistics.median([r["server_util"] or 0 for r in reps]) if reps else 0
    if cu >= 0.9 and su < 0.85:
        return "client"
    if su >= 0.85:
        return "server"
    return "neither saturated"


def contended(reps):
    v = [max(r.get("others_on_server_cpu") or 0, 0) + (r.get("steal") or 0) for r in reps]
    return statistics.median(v) if v else 0.0


# reps falling by more than this overall, each below the one before: the
# JVM was still compiling after its warm-up windows agreed (a plateau)
COLD_DROP = 0.15


def still_warming(reps):
    """The CPU per request of a cell's reps, when each is lower than the one
    before and the last is more than COLD_DROP below the first; else None."""
    v = [r.get("cpu_ms_per_req") for r in reps]
    if len(v) < 3 or not all(v) or any(b >= a for a, b in zip(v, v[1:])) or v[-1] > v[0] * (1 - COLD_DROP):
        return None
    return v


def verified_summary(reps, suite):
    vs = [r["verified"] for r in reps]
    ok = all(v.get("ok") for v in vs) and bool(vs)
    seen = {}
    for v in vs:
        for k, n in (v.get("seen") or {}).items():
            seen[k] = seen.get(k, 0) + n
    top = max(seen, key=seen.get) if seen else None
    proto, name, group = verify.split_key(top)
    return ok, proto, name, group, sorted({v.get("source", "?") for v in vs}), seen


__all__ = ["one", "summarize", "bottleneck", "client_for", "verified_summary", "S", "procs"]
