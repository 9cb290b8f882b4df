#!/usr/bin/env python3
"""tlsbridge benchmark runner (started by scripts/bench, which installs and
builds first). Starts every server variant on 127.0.0.1 pinned to CPU 1,
drives it from CPU 0, and writes bench/results/<timestamp>/{results.json,
report.md, *.png}."""

import argparse
import datetime
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster  # noqa: E402
import envinfo  # noqa: E402
import icount  # noqa: E402
import jmh  # noqa: E402
import measure  # noqa: E402
import pki  # noqa: E402
import pq  # noqa: E402
import plan  # noqa: E402
import rules  # noqa: E402
import probe  # noqa: E402
import progress  # noqa: E402
import perfprofile as perfprof  # noqa: E402
import report  # noqa: E402
import suites  # noqa: E402
import targets  # noqa: E402
import variants  # noqa: E402
import verify  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# the whole command's start (scripts/bench exports it: the build counts)
T0 = time.monotonic() - max(0.0, time.time() - float(os.environ.get("TB_BENCH_STARTED") or time.time()))
# the live progress line (progress.py); None until the plan is made
PROGRESS = None
# wall time per phase of the run and how often it ran: what the estimate of
# a full run is calibrated on (results.json meta.phases)
PHASES = {}


class phase:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t = time.monotonic()

    def __exit__(self, *exc):
        s, n = PHASES.get(self.name, (0.0, 0))
        PHASES[self.name] = (s + time.monotonic() - self.t, n + 1)


def log(msg):
    print(f"\033[1m[bench {time.monotonic() - T0:5.0f}s]\033[0m {msg}", file=sys.stderr, flush=True)
    if PROGRESS:
        PROGRESS.printed()


def at(doing):
    if PROGRESS:
        PROGRESS.at(doing)


def begin(phase, est_s):
    if PROGRESS:
        PROGRESS.begin(phase, est_s)


def parse(argv):
    ap = argparse.ArgumentParser(prog="scripts/bench", description=__doc__)
    ap.add_argument("--full", action="store_true", help="the long run (75-125 min on 2 cores; needs a quiet "
                    "machine): every size and suite, 3 repetitions, converging warm-ups, 7 pairs per target, the "
                    "cluster, post-quantum and syscall cells")
    ap.add_argument("--quick", action="store_true", help="the quick run (the default, about 5 min): one size, one "
                    "suite per protocol, short windows; figures to look at, not to quote")
    ap.add_argument("--variants", type=lambda s: s.split(","), help="comma list (default: all); see --list")
    ap.add_argument("--suites", type=lambda s: s.split(","), help="comma list of suite keys; see --list")
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], help="keep-alive body sizes in bytes")
    ap.add_argument("--modes", type=lambda s: s.split(","), help="keepalive,newconn,resumed")
    ap.add_argument("--duration", type=float, help="seconds per timed run")
    ap.add_argument("--reps", type=int, help="interleaved repetitions per cell (>= 3 for real figures)")
    ap.add_argument("--warmup", type=float, help="cap in seconds on a JVM server's warm-up per cell: its cell's "
                    "load in --warmup-window windows until three in a row agree within 5%% on CPU per request")
    ap.add_argument("--warmup-handshake", type=float, help="the same cap on new-connection and resumed cells "
                    "(default: twice --warmup in a full run, --warmup in the quick run)")
    ap.add_argument("--warmup-window", type=float, default=1.0, help="seconds per warm-up window")
    ap.add_argument("--preroll", type=float, help="untimed seconds before a cell's first repetition (servers "
                    "without a JIT; JVM servers get the converging warm-up)")
    ap.add_argument("--pairs", type=int, help="alternating A/B pairs of windows per target (full: 7, quick: 3)")
    ap.add_argument("--pair-duration", type=float, help="seconds per paired window (default --duration; quick: 1)")
    ap.add_argument("--repair-max", type=int, help="cells against SunJSSE not planned as paired whose same-run medians "
                    "miss get --pairs pairs too, at most this many in the run (full: %d, quick: 0)" % plan.REPAIR_MAX)
    ap.add_argument("--tax-pairs", choices=["all", "primary", "off"], help="the TLS taxes judged on --pairs "
                    "pairs of tomcat-tlsbridge and nginx windows: every tax (full), the primary suite's (quick), none")
    ap.add_argument("--seed", type=int, help="seed of the per-pair A/B order (default: random, printed)")
    ap.add_argument("--connections", type=int, default=50, help="wrk connections")
    ap.add_argument("--concurrency", type=int, default=100, help="siege users (JSS's table used 100)")
    ap.add_argument("--newconn-size", type=int, default=1024, help="body size of new-connection/resumed cells")
    ap.add_argument("--jmh", choices=["on", "off"], default="on")
    ap.add_argument("--icount", choices=["on", "off"], default="on",
                    help="instruction counts of the engine core under callgrind (bench/runner/icount.py)")
    ap.add_argument("--syscalls", choices=["on", "off"], help="syscalls per request of the native socket, "
                    "SunJSSE and nginx under strace (bench/runner/syscalls.py; default: on in the full run, off "
                    "in the quick run, whose CI row counts them itself, and with --variants or --suites)")
    ap.add_argument("--probe", choices=["off", "primary", "all"], default="primary",
                    help="extra passes with tlsbridge-probe attached: on the primary suite's smallest size per "
                         "mode and the plain floors (primary), on every cell (all)")
    ap.add_argument("--probe-passes", type=int, help="probed passes per variant and probed cell, each right after "
                    "a plain repetition (the pair gives the probe's tax)")
    ap.add_argument("--profile", choices=["off", "miss", "all"], default="miss",
                    help="perf profiles: of the cells of every missed target and of tlsbridge's and SunJSSE's "
                         "Tomcat keep-alive 1 KiB and new-connection cells (miss), of every cell (all)")
    ap.add_argument("--profile-seconds", type=float, help="length of one perf profile")
    ap.add_argument("--profile-max", type=int, help="at most this many profiles in the run (0: no limit; "
                    "quick run: 4); the cells of a target that is a MISS when they finish are profiled past it")
    ap.add_argument("--cluster", choices=["on", "off", "only"],
                    help="HAProxy + 3 Tomcat nodes: tlsbridge with shared / per-node ticket keys, SunJSSE "
                         "(bench/runner/cluster.py); default on for a full run, off in the quick run or with --variants; "
                         "only: the cluster cells and nothing else")
    ap.add_argument("--out", help="results directory (default bench/results/<timestamp>)")
    ap.add_argument("--list", action="store_true", help="list variants and suites, then exit")
    o = ap.parse_args(argv)
    if o.full and o.quick:
        ap.error("--full and --quick exclude each other (no argument is the quick run)")
    o.quick = q = not o.full
    # The full run's length: plan.estimate_seconds (bench/README.md says how
    # it is calibrated on measured phase times). 2 s windows
    # (repetitions and pairs; 3 s before issue 16's targets, ~8 min more)
    # still hold several 10^2 handshakes or 10^4 keep-alive requests, 200
    # ticks of server CPU at full load. --quick has no pre-roll for servers
    # without a JIT (nginx).
    o.duration = o.duration or (1.0 if q else 2.0)
    o.reps = o.reps or (1 if q else 3)
    # the warm-up needs three windows to agree: --quick caps it there (it
    # says whether they agreed), the full run goes on for up to a minute
    o.warmup = o.warmup if o.warmup is not None else (3.0 if q else 60.0)
    # a handshake cell runs ~10^3 connections a second against a keep-alive
    # cell's ~10^4 requests, so its JIT sees less of its code per window:
    # SunJSSE's new-connection cells still compiled at 60 s (narrowed run of
    # 2026-12-04), and a cell timed while C2 compiles is charged its CPU
    o.warmup_handshake = (o.warmup_handshake if o.warmup_handshake is not None
                          else (o.warmup if q else 2 * o.warmup))
    o.preroll = o.preroll if o.preroll is not None else (0.0 if q else 1.0)
    o.pairs = o.pairs if o.pairs is not None else (3 if q else 7)
    # a medians MISS outside the planned pairs may be the machine, not the
    # code (a contended window): pairs settle it, within a budget
    o.repair_max = o.repair_max if o.repair_max is not None else (0 if q else plan.REPAIR_MAX)
    # --quick pairs the taxes of its primary suite only (keep-alive and new
    # connection: ~16 s), not the TLS 1.2 handshake's (9 s more)
    o.tax_pairs = o.tax_pairs or ("primary" if q else "all")
    # narrowed runs (--variants, --suites) skip them unless asked: a minute
    # of servers of their own
    o.syscalls = o.syscalls or ("off" if q or o.variants or o.suites else "on")
    # --quick converges on its keep-alive cells only (the JIT-heavy steady
    # state); its other JVM cells get one pre-roll window
    o.warm_modes = ("keepalive",) if q else ("keepalive", "newconn", "resumed")
    o.pair_duration = o.pair_duration or (1.0 if q else o.duration)
    o.seed = o.seed if o.seed is not None else random.SystemRandom().randrange(1 << 31)
    o.probe_passes = max(1, min(o.probe_passes or 1, o.reps))
    o.profile_seconds = o.profile_seconds or (2.0 if q else 3.0)
    # item 1 judges every cell: its misses could ask for dozens of profiles;
    # the cap keeps the run in its budget (cells past it say "not taken")
    o.profile_max = o.profile_max if o.profile_max is not None else (4 if q else plan.FULL_PROFILES)
    o.cluster = o.cluster or ("off" if q or o.variants else "on")
    if o.cluster == "only":  # nothing else: no regular cell, JMH, instruction or syscall count, probe or profile
        o.jmh = o.icount = o.probe = o.profile = o.syscalls = "off"
    return o


def _terminate(signum, frame):
    # timeouts and Ctrl-C must still stop every server we started
    raise SystemExit(128 + signum)


def main(argv):
    global PROGRESS
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    o = parse(argv)
    allv = variants.all_variants()
    if o.list:
        for v in allv:
            flav = f" [OpenSSL: {v.flavour}]" if getattr(v, "flavour", None) else ""
            print(f"{v.name:26} {v.server:28} {v.provider:24} {v.note}{flav}")
        print()
        for s in suites.SUITES:
            print(f"{s.key:16} {s.label}")
        return 0
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(o.out or os.path.join(ROOT, "bench", "results", stamp))
    work = os.path.join(out, "work")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    started = time.time()

    # this tree's own jar (scripts/bench just built it); ~/.m2's copy only
    # when the tree has none, since other checkouts install there too
    jar = [j for pat in ("target/tlsbridge-*.jar", os.path.expanduser("~/.m2/repository/org/tlsbridge/tlsbridge/*/tlsbridge-*.jar"))
           for j in sorted(glob.glob(os.path.join(ROOT, pat)))
           if not j.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
    jar = jar[:1]
    java17 = os.environ.get("TB_JAVA17") or shutil.which("java")
    java25 = os.environ.get("TB_JAVA25") or (
        "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java" if os.path.exists("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java") else None)
    ctx = variants.Ctx(ROOT, work, pki.make(os.path.join(work, "pki")), java17, java25, jar[0] if jar else None)

    chosen = [] if o.cluster == "only" else (
        [v for v in allv if v.name in o.variants] if o.variants else variants.default(allv, o.quick))
    unknown = set(o.variants or []) - {v.name for v in allv}
    if unknown:
        log(f"unknown variants: {', '.join(sorted(unknown))} (see --list)")
        return 2
    avail, notavail = [], {}
    for v in chosen:
        ok, why = v.available(ctx)
        (avail.append(v) if ok else notavail.__setitem__(v.name, why))
    for name, why in notavail.items():
        log(f"NOT AVAILABLE in this build: {name}: {why}")
    probe_bin, probe_why = probe.find(ROOT)
    if probe_bin:
        probe_why = probe.usable(probe_bin)
        probe_bin = None if probe_why else probe_bin
    if o.probe != "off" and not probe_bin:
        log(f"NOT AVAILABLE in this build: probe pass: {probe_why}")
    perf, perf_why = perfprof.available() if o.profile != "off" else (None, "--profile off")
    if o.profile != "off" and not perf:
        log(f"NOT AVAILABLE: perf profiles: {perf_why}")
    ctx.perf = perf
    ctx.probe = probe_bin

    groups = plan.build(o) if o.cluster != "only" else []
    tls_v = [v for v in avail if v.tls]
    plain_v = [v for v in avail if not v.tls]
    est_parts, est_groups = {}, []
    extras = {}
    if cluster.wanted(o):
        extras["cluster"] = cluster.estimate_seconds(o)
    if pq.wanted(o, {v.name for v in avail}):
        extras["post-quantum handshakes"] = pq.estimate_seconds(o)
    est = plan.estimate_seconds(groups, avail, o, est_parts, est_groups, extras)
    log(f"{'quick' if o.quick else 'full'} run: {len(groups)} server configurations, "
        f"{sum(len(g.cells) for g in groups)} workloads, {len(tls_v)} TLS + {len(plain_v)} plain variants; "
        f"measuring takes about {est / 60:.1f} min; pair order seed {o.seed}")
    PROGRESS = progress.Progress(est, T0, log).start()

    results = {"meta": {"started": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
                        "mode": "quick" if o.quick else "full", "argv": argv,
                        "options": {k: v for k, v in vars(o).items() if k != "list"},
                        "jvm_flags": variants.JVM_FLAGS, "jdk25_extra_flags": variants.JDK25_EXTRA,
                        "pinning": {"server_cpu": variants.procs.SERVER_CPU, "client_cpu": variants.procs.CLIENT_CPU},
                        "results_dir": out,
                        "estimate_s": {k: round(v) for k, v in est_parts.items()}},
               "variants": {v.name: dict(v.describe(), available=v.name not in notavail,
                                         reason=notavail.get(v.name, "")) for v in chosen},
               "cells": [], "not_available": [{"what": k, "why": w} for k, w in notavail.items()],
               "commands": {"servers": {}, "clients": {}}}
    if o.probe != "off" and not probe_bin:
        results["not_available"].append({"what": "probe pass", "why": probe_why})
    if o.profile != "off" and not perf:
        results["not_available"].append({"what": "perf profiles", "why": perf_why})
    if probe_bin:
        results["meta"]["probe"] = probe_bin
    tomcat_version = None

    for gi, g in enumerate(groups):
        vs = tls_v if g.tls else plain_v
        vs = [v for v in vs if any(variants.serves(v, m, n, g) for m, n in g.cells)]
        if not vs:
            continue
        begin(f"servers {gi + 1}/{len(groups)}: {g.suite.label if g.tls else 'plain HTTP, the no-TLS baseline'}; "
              f"{len(vs)} servers, {len(g.cells)} workload{'s' if len(g.cells) > 1 else ''}", est_groups[gi])
        at("starting the servers")
        handles = []
        for v in vs:
            try:
                with phase("server start"):
                    if isinstance(v, variants.Nginx):
                        h = v.start(ctx, g.suite, sizes=sorted({n for _, n in g.cells}))
                    else:
                        h = v.start(ctx, g.suite)
            except variants.StartError as e:
                msg = str(e).strip().splitlines()
                reason = next((ln for ln in msg if "UNAVAILABLE" in ln), msg[-1] if msg else "failed to start")
                log(f"  {v.name}: could not start for {g.suite.key}: {reason}")
                results["not_available"].append({"what": f"{v.name} ({g.suite.key})", "why": reason})
                continue
            if v.server.startswith("Tomcat") and tomcat_version is None:
                line = next((ln for ln in h.proc.output().splitlines() if ln.startswith("BENCH-INFO")), "")
                tomcat_version = line.split("tomcat=")[-1] if "tomcat=" in line else None
            results["commands"]["servers"][f"{v.name} {g.suite.key}"] = h.cmd
            h.keepalive = True
            if g.tls and isinstance(h, variants.SocketHandle):
                h.keepalive = verify.supports_keepalive(h.port)
            handles.append(h)
            log(f"  {v.name} listening on {h.port} (pid {h.proc.pid})")
        try:
            for ci, (mode, size) in enumerate(g.cells):
                at(f"workload {ci + 1}/{len(g.cells)}: {report.MODE_SHORT[mode]} {report.size_label(size)}")
                cells = run_cell(results, handles, g, mode, size, o, work, probe_bin)
                with phase("perf profile"):
                    profile_cell(results, cells, ctx, g, mode, size, o, work)
        finally:
            with phase("server stop"):
                for h in handles:
                    h.stop()
        write(results, out, ctx, tomcat_version, started, o)

    tail = {k: v for k, v in est_parts.items()}
    # what the groups' own estimates left over (profiles, pairs after a
    # miss: spent inside the groups) is no step of its own
    PROGRESS.settle(est - sum(tail.get(k, 0) for k in ("post-quantum handshakes", "cluster", "JMH",
                                                      "instruction counts", "syscall counts")))
    if pq.wanted(o, {v.name for v in avail}):
        begin("post-quantum key exchange: X25519MLKEM768 vs x25519 handshakes",
              tail.get("post-quantum handshakes", 0))
        with phase("post-quantum"):
            results["pq"] = pq.run(ctx, next(v for v in avail if v.name == pq.VARIANT), o, work, log)
        write(results, out, ctx, tomcat_version, started, o)
    if cluster.wanted(o):
        begin(f"cluster behind HAProxy ({cluster.NODES} nodes)", tail.get("cluster", 0))
        with phase("cluster"):
            results["cluster"] = cluster.run(ctx, o, work, log)
        if not results["cluster"]["ok"]:
            results["not_available"].append({"what": "cluster cells", "why": results["cluster"]["reason"]})
        write(results, out, ctx, tomcat_version, started, o)
    if o.jmh == "on":
        begin("JMH microbenchmarks (in-memory engine pair)", tail.get("JMH", 0))
        with phase("JMH"):
            results["jmh"] = jmh.run(ctx, o.quick, work, log)
        with phase("perf profile"):
            profile_jmh(results, ctx, o, work)
        if results["jmh"].get("ok") is False:
            log("JMH failed: " + results["jmh"].get("reason", ""))
    if o.icount == "on":
        begin("instruction counts of the engine core (callgrind)", tail.get("instruction counts", 0))
        with phase("instruction counts"):
            results["icount"] = run_icount(work, 1 if o.quick else 2)
        for f, r in results["icount"]["flavours"].items():
            if not r["ok"]:
                results["not_available"].append({"what": f"instruction counts, {f} flavour", "why": r["reason"]})
                log(f"NOT AVAILABLE: instruction counts, {f} flavour: {r['reason']}")
    if o.syscalls == "on":
        begin("syscalls per request (strace)", tail.get("syscall counts", 0))
        with phase("syscalls"):
            results["syscalls"] = run_syscalls(work)
        if not results["syscalls"].get("ok"):
            results["not_available"].append({"what": "syscall counts", "why": results["syscalls"]["reason"]})
    begin("writing the report and charts", 0.0)
    write(results, out, ctx, tomcat_version, started, o, final=True)
    PROGRESS.stop()
    report.print_table(results)
    log(f"results: {out}/results.json, report.md, {len(glob.glob(os.path.join(out, '*.png')))} PNG")
    return 0


def run_icount(work, runs):
    """Every flavour's counts (icount.measure_all); ok when one was counted."""
    flavours = icount.measure_all(os.path.join(ROOT, "target", "native"), os.path.join(work, "icount"), runs)
    for f, r in flavours.items():
        if r["ok"]:
            b = r["baseline"]
            log(f"  instruction counts, {f} flavour: {b['status']}" + (f" ({b['why']})" if b.get("why") else ""))
    ok = any(r["ok"] for r in flavours.values())
    return {"ok": ok, "flavours": flavours,
            "reason": None if ok else "; ".join(f"{f} flavour: {r['reason']}" for f, r in flavours.items())}


def run_syscalls(work):
    """Item 3's syscall counts: bench/runner/syscalls.py in its own process
    (it starts its own servers)."""
    path = os.path.join(work, "syscalls.json")
    try:
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "syscalls.py"),
                            "--json", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"ok": False, "reason": "syscalls.py timed out (600 s)"}
    if p.returncode != 0 or not os.path.exists(path):
        return {"ok": False, "reason": f"syscalls.py failed: {(p.stderr + p.stdout).strip().splitlines()[-1:] or p.returncode}"}
    with open(path) as f:
        res = json.load(f)
    log(p.stdout.strip())
    # the servers it could not count (nginx not installed) say so on stderr
    return dict(res, ok=True, table=p.stdout + "".join(f"\n{x}" for x in p.stderr.splitlines() if "NOT COUNTED" in x))


def converge(h, g, mode, size, o, work):
    """A JVM server runs its cell's own load in --warmup-window windows until
    rules.WARM_AGREE of them in a row agree with a quiet JIT (rules.agreed), or
    its mode's cap of load (rules.warm_cap): a JIT still compiling (SunJSSE has more Java to
    compile than tlsbridge) must not be timed. At the cap, `cap_reason` says
    whether the CPU per request never agreed ("cpu") or agreed only while
    the compiler threads were busy ("jit")."""
    t0, vals, jits, converged = time.monotonic(), [], [], False
    cap = rules.warm_cap(o, mode)
    most = max(rules.WARM_AGREE, int(round(cap / o.warmup_window)))
    agreed_busy = False
    while len(vals) < most and h.proc.alive():
        r, _ = measure.one(h, mode, size, o.warmup_window, o, work, g.suite)
        vals.append(r["cpu_ms_per_req"])
        jits.append(r.get("jit_share"))
        if rules.agreed(vals, jits):
            converged = True
            break
        agreed_busy = agreed_busy or rules.agreed(vals)
    w = {"seconds": round(len(vals) * o.warmup_window, 1), "wall_s": round(time.monotonic() - t0, 1),
         "windows": vals, "jit_share": jits, "converged": converged, "cap_s": cap}
    if not converged:
        w["cap_reason"] = "jit" if agreed_busy else "cpu"
    state = "converged" if converged else f"CAP, not converged ({'JIT busy' if agreed_busy else 'CPU/req'})"
    log(f"  {mode:9} {size:>8} {h.variant.name:24} warm-up: {len(vals)} windows, {state}: "
        f"{' '.join(f'{x:.4f}' for x in vals if x)}; JIT % "
        f"{' '.join(f'{100 * x:.0f}' for x in jits if x is not None)}")
    return w


def run_cell(results, handles, g, mode, size, o, work, probe_bin):
    cells = {}
    for h in handles:
        if not variants.serves(h.variant, mode, size, g):
            continue
        cells[h] = {"variant": h.variant.name, "provider": h.variant.provider, "server": h.variant.server,
                    "jvm": h.variant.jdk, "mode": mode, "client": measure.client_for(mode), "size": size,
                    "suite_key": g.suite.key, "cert": g.suite.cert,
                    "expected": {"protocol": g.suite.protocol, "suite": g.suite.iana},
                    "reps": [], "notes": []}
        if mode == "keepalive" and not getattr(h, "keepalive", True):
            cells[h]["notes"].append("the server closes after each response (JSS semantics): wrk reconnected "
                                     "for every request, so this is not a keep-alive figure")
    # primary: the primary suite's smallest size per mode and the plain
    # floors; --quick: its keep-alive cell only
    primary = g.suite.key in (rules.PRIMARY, "plain") and size == min(n for m, n in g.cells if m == mode)
    if o.quick:
        primary = primary and g.suite.key == rules.PRIMARY and mode == "keepalive"
    probed = bool(probe_bin) and (o.probe == "all" or (o.probe == "primary" and primary))
    for h in cells:
        if not h.proc.alive():
            continue
        at(f"{report.MODE_SHORT[mode]} {report.size_label(size)}, warm-up of {h.variant.name}")
        if h.variant.jdk and mode in o.warm_modes:
            with phase("warm-up"):
                cells[h]["warmup"] = converge(h, g, mode, size, o, work)
        elif o.preroll > 0 or h.variant.jdk:
            with phase("preroll"):
                measure.drive(h, mode, size, max(o.preroll, o.warmup_window if h.variant.jdk else 0), o, work,
                              g.suite)
    pairs = {h: [] for h in cells}
    at(f"{report.MODE_SHORT[mode]} {report.size_label(size)}, {o.reps} timed repetition(s) of {len(cells)} servers")
    for rep in range(o.reps):
        order = list(cells)
        k = rep % len(order) if order else 0
        for h in order[k:] + order[:k]:
            if not h.proc.alive():
                continue
            with phase(f"rep {mode}"):
                r, cmd = measure.one(h, mode, size, o.duration, o, work, g.suite)
            r["rep"] = rep + 1
            cells[h]["reps"].append(r)
            if h.client_env:
                # a server that cannot pin the suite: its clients' own pin
                # (variants.client_tls13_pin) is part of the command
                results["commands"]["clients"][f"{mode} {g.suite.key} {h.variant.name}"] = \
                    [f"{k}={v}" for k, v in h.client_env.items()] + list(cmd)
            else:
                results["commands"]["clients"][f"{mode} {g.suite.key}"] = cmd
            log_rep(mode, size, h.variant.name, f"rep {rep + 1}", r)
            # probed passes in the last rounds, each right after a plain
            # repetition of the same variant: the pair gives the probe's tax
            if probed and rep >= o.reps - o.probe_passes and h.proc.alive():
                with phase(f"probe pass {mode}"):
                    pp = probe.run_pass(probe_bin, h,
                                        lambda h=h: measure.one(h, mode, size, o.duration, o, work, g.suite),
                                        os.path.join(work, "logs", "probe.log"))
                cells[h].setdefault("probe_passes", []).append(pp)
                if pp.get("rep"):
                    pairs[h].append((r, pp["rep"]))
                    log_rep(mode, size, h.variant.name, "probed", pp["rep"])
    for h, c in cells.items():
        passes = c.pop("probe_passes", [])
        if passes:
            last = next((x for x in reversed(passes) if x.get("ok")), passes[-1])
            c["probe"] = dict(last, passes=len(passes), tax=probe.tax(pairs[h]),
                              errors=[x["error"] for x in passes if x.get("error")])
    for h, c in cells.items():
        if not c["reps"]:
            continue
        c.update(measure.summarize(c["reps"]))
        ok, proto, suite, group, sources, seen = measure.verified_summary(c["reps"], g.suite)
        c.update({"protocol": proto, "suite": suite, "group": group, "verified": ok, "verified_by": sources,
                  "negotiated_seen": seen, "bottleneck": measure.bottleneck(c["reps"])})
        busy = measure.contended(c["reps"])
        c["contention"] = round(busy, 3)
        if busy > 0.1:
            c["notes"].append(f"contended: other processes used {busy:.0%} of the server CPU during the timed "
                              f"windows (median); not a clean figure")
        cold = measure.still_warming(c["reps"])
        c["still_warming"] = bool(cold)
        if cold:
            c["notes"].append(f"reps fall monotonically ({' -> '.join(f'{x:.4g}' for x in cold)} ms/req): still "
                              f"warming after its warm-up windows agreed; not a steady figure")
        if c["bottleneck"] == "client":
            c["notes"].append(f"client-bound: {c['client']} used its whole CPU while the server did not")
        results["cells"].append(c)
    at(f"{report.MODE_SHORT[mode]} {report.size_label(size)}, alternating pairs of windows")
    with phase(f"pairs {mode}"):
        run_pairs(results, cells, g, mode, size, o, work)
    return cells


def run_pairs(results, cells, g, mode, size, o, work):
    """Each target judged on this workload: --pairs pairs of windows of its
    two cells, A then B or B then A as a seeded coin says, so drift on a
    shared machine hits both sides of a pair alike; the verdict is the
    median of the per-pair ratios (targets.py). Then, while the run's
    --repair-max budget lasts, each item-1 comparison not planned as paired
    whose same-run medians missed (targets.repair_pairings). The TLS taxes
    (--tax-pairs) pair their two TLS servers' windows the same way."""
    by_name = {h.variant.name: h for h in cells}
    rng = random.Random(f"{o.seed} {mode} {size} {g.suite.key}")
    todo = [(p, "planned") for p in targets.pairings(results, mode, size, g.suite.key,
                                                      taxes=plan.tax_paired(o, g.suite.key))]
    used = sum(1 for e in results.get("pairs", {}).values() if e.get("trigger") == targets.MEDIANS_MISS)
    todo += [(p, targets.MEDIANS_MISS)
             for p in targets.repair_pairings(results, mode, size, g.suite.key, o.repair_max - used)]
    for (name, va, vb, metric), trigger in todo:
        ha, hb = by_name.get(va), by_name.get(vb)
        if not ha or not hb:
            continue
        e = {"ours": va, "theirs": vb, "metric": metric, "seconds": o.pair_duration, "seed": o.seed,
             "trigger": trigger, "ratios": [], "values": [], "orders": [], "windows": []}
        for i in range(o.pairs):
            order = [ha, hb]
            rng.shuffle(order)
            got = {}
            for h in order:
                if h.proc.alive():
                    r, _ = measure.one(h, mode, size, o.pair_duration, o, work, g.suite)
                    got[h] = r.get(metric)
                    e["windows"].append({"pair": i + 1, "variant": h.variant.name, metric: r.get(metric),
                                         "req_per_s": r["req_per_s"], "errors": r["errors"],
                                         "others_on_server_cpu": r.get("others_on_server_cpu")})
            a, b = got.get(ha), got.get(hb)
            e["ratios"].append(round(b / a, 4) if a and b else None)
            e["values"].append([a, b])  # the TLS taxes' verdict subtracts the floors from each
            e["orders"].append("AB" if order[0] is ha else "BA")
        results.setdefault("pairs", {})[name] = e
        ok = [targets.inv(x) for x in e["ratios"] if targets.inv(x) is not None]
        log(f"  pairs {va} vs {vb}{' (after a ' + trigger + ')' if trigger == targets.MEDIANS_MISS else ''}: "
            f"CPU ratio {va} over {vb} per pair {' '.join(f'{x:.2f}' for x in ok)} "
            f"(orders {' '.join(e['orders'])}, seed {o.seed})")


def log_rep(mode, size, name, what, r):
    log(f"  {mode:9} {size:>8} {name:24} {what}: {r['req_per_s']:>9.1f} req/s "
        f"{(r['cpu_ms_per_req'] or 0):.4f} ms/req srv {r['server_util'] or 0:.2f} cli {r['client_util'] or 0:.2f} "
        f"others {r['others_on_server_cpu'] or 0:.2f} err {r['errors']} "
        f"{'ok' if r['verified'].get('ok') else 'UNVERIFIED ' + str(r['verified'].get('seen'))}")


# Where tlsbridge's CPU goes, whatever the targets say: its Tomcat cells and
# SunJSSE's next to them, keep-alive 1 KiB and new connection, primary suite.
ALWAYS_PROFILE = {"tomcat-tlsbridge", "tomcat-sunjsse"}


def profile_cell(results, cells, ctx, g, mode, size, o, work):
    if not getattr(ctx, "perf", None) or not cells:
        return
    want = []  # ALWAYS_PROFILE first (a --profile-max cap keeps them), then the misses' cells
    # A MISS is reported with its profile whatever the cap (issue 16's "each
    # MISS with its profile"): cells are profiled as they finish, so NOISY
    # cells early in the run used to spend the cap before a late MISS.
    uncapped = set()
    if o.profile == "all":
        want = [h.variant.name for h in cells]
    elif o.profile == "miss":
        here = (mode, size, g.suite.key)
        if g.suite.key == rules.PRIMARY and size == 1024 and mode in ("keepalive", "newconn"):
            want += sorted(ALWAYS_PROFILE, reverse=True)
        for t in report.targets(results):
            if targets.missed(t):
                mine = [v for v, m, n, sk in t.get("cells", []) if (m, n, sk) == here]
                want += [v for v in mine if v not in want]
                if t["status"] == "MISS":
                    uncapped.update(mine)
    by_name = {h.variant.name: h for h in cells}
    for name in want:
        h = by_name.get(name)
        c = cells.get(h)
        if not h or not h.proc.alive() or not c["reps"]:
            continue
        if name not in uncapped and not profiles_left(o):
            log(f"  profile of {name} skipped: --profile-max {o.profile_max} reached")
            c["profile"] = {"ok": False, "error": f"not taken: --profile-max {o.profile_max} reached"}
            continue
        tag = f"{h.variant.name}-{mode}-{size}-{g.suite.key}"
        java = ctx.java.get(h.variant.jdk) if h.variant.jdk else None
        with phase("perf profile one"):
            pr = perfprof.record(ctx.perf, h, java, o.profile_seconds,
                                 lambda h=h: measure.one(h, mode, size, o.profile_seconds + 1, o, work, g.suite),
                                 os.path.join(work, "profiles"), tag)
        c["profile"] = pr
        if pr.get("ok"):
            top = ", ".join(f"{k} {v:.0f}%" for k, v in sorted(pr["buckets_pct"].items(), key=lambda kv: -kv[1])[:4])
            jit = pr.get("jit_share")
            log(f"  profile {tag}: {pr['samples']} samples: {top}"
                + (f"; JIT {100 * jit:.1f}% of the process's CPU" if jit is not None else ""))
        else:
            log(f"  profile {tag} failed: {pr.get('error')}")


def profiles_left(o):
    return not o.profile_max or PHASES.get("perf profile one", (0, 0))[1] < o.profile_max


def profile_jmh(results, ctx, o, work):
    """Each missed JMH target: the benchmark profiled for TLSBridge and for
    SunJSSE with the same parameters."""
    if not getattr(ctx, "perf", None) or o.profile == "off" or not (results.get("jmh") or {}).get("ok"):
        return
    out = results["jmh"].setdefault("profiles", {})
    for t in report.targets(results):
        spec = t.get("jmh")
        if not targets.missed(t) or not spec:
            continue
        for side, prov in (("ours", "TLSBridge"), ("theirs", "SunJSSE")):
            if PHASES.get("perf profile jmh", (0, 0))[1] >= plan.jmh_profiles(o):
                log(f"  profile of JMH {spec['bench']} {prov} skipped: {plan.jmh_profiles(o)} JMH profiles taken")
                continue
            params = dict(spec["params"], provider=prov)
            tag = "jmh-" + spec["bench"] + "-" + "-".join(v for _, v in sorted(params.items()))
            with phase("perf profile jmh"):
                pr = jmh.profile(ctx, ctx.perf, spec["bench"], params, o.profile_seconds, work, tag)
            out.setdefault(t["target"], {})[side] = dict(pr, variant=f"{prov} (JMH)", jmh=True)
            log(f"  profile {tag}: " + (f"{pr['samples']} samples" if pr.get("ok") else f"failed: {pr.get('error')}"))


def write(results, out, ctx, tomcat_version, started, o, final=False):
    results["meta"]["versions"] = envinfo.collect(ctx, tomcat_version) if final or "versions" not in results["meta"] \
        else results["meta"]["versions"]
    results["meta"]["elapsed_s"] = round(time.time() - started, 1)
    results["meta"]["phases"] = {k: {"seconds": round(s, 1), "count": n, "each_s": round(s / n, 2)}
                                 for k, (s, n) in sorted(PHASES.items())}
    results["targets"] = report.targets(results)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    if final:
        report.write(results, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
