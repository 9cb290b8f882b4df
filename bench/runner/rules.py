"""The rules and costs that the plan and the cells it plans both read: the
primary suite, when a warm-up has converged, and what an event costs in wall
time. It imports no other runner module, so plan.py can import the cells
(cluster.py, pq.py, targets.py) for their estimates without a circle."""

PRIMARY = "t13-aes128"
# A JVM cell's warm-up has converged when this many windows in a row agree
# on CPU per request within WARM_TOL (max over min) and in each of them the
# JIT compiler threads used at most WARM_JIT_MAX of the process's CPU.
WARM_AGREE = 3
WARM_TOL = 0.05
# Handshake crypto dominates a new-connection window, so its CPU per request
# agrees within 5% while C2 still takes a fifth of the process (22% of
# tomcat-tlsbridge's ECDSA new-connection profile once). Compilation counted
# in a timed window inflates CPU per request by its share; at 2% that bias is
# under half the agreement tolerance and well under the taxes compared.
WARM_JIT_MAX = 0.02

# Wall seconds per event beyond the load's own duration, from the phase
# timings of runs on the 2-vCPU machine (results.json meta.phases), rounded
# up: a server start, a group's stop, a load run's set-up and verification
# (wrk / siege), the probe's attach and calibration, a profile's perf
# start, jcmd and perf script.
# JMH's are per benchmark and parameter set (a fork of its own, its warm-up
# and iterations): the full run of 2026-12-05 11:54 took 224 s for 16 sets
# (14.0 s each); the quick run's 4 sets of 2 + 2 s took ~25 s.
COST = {"start": 1.5, "stop": 2.0, "wrk": 0.1, "siege": 0.1, "probe": 0.6, "profile": 2.0,
        "jmh_set_full": 15.6, "jmh_set_quick": 6.25, "jmh_profile": 12.0, "icount": 30.0, "syscalls": 100.0}
# measured per JVM cell in the full run of 2026-12-04 19:57 (warm_windows)
WARM_WINDOWS = {"keepalive": 25, "newconn": 34, "resumed": 15}


def jit_quiet(share):
    """A window's JIT share lets it count: none measured (no JIT) or at most
    WARM_JIT_MAX."""
    return share is None or share <= WARM_JIT_MAX


def agreed(vals, jit=None):
    """The last WARM_AGREE warm-up windows all measured something, agree
    within WARM_TOL (max over min) and, with jit (each window's compiler
    share, parallel to vals), each had a quiet JIT: the warm-up has
    converged."""
    last = vals[-WARM_AGREE:]
    if jit is not None and not all(jit_quiet(x) for x in jit[-WARM_AGREE:]):
        return False
    return len(last) == WARM_AGREE and all(last) and max(last) <= min(last) * (1 + WARM_TOL)


def load_seconds(mode, seconds):
    """Wall seconds of one load run: wrk and siege take whole seconds (at
    least one), plus their set-up."""
    return max(1, int(round(seconds))) + COST["siege" if mode == "newconn" else "wrk"]


def warm_cap(opts, mode):
    """Seconds of load a JVM cell's warm-up may take: handshake cells have
    their own cap (--warmup-handshake)."""
    return opts.warmup_handshake if mode in ("newconn", "resumed") else opts.warmup


def warm_windows(opts, mode="keepalive"):
    """Warm-up windows a JVM cell is expected to take: the quick run stops at
    three (its cap). The means per cell of the full run of 2026-12-04 19:57
    (JIT watched, 120 s handshake cap): 24.6 keep-alive (61 cells; a
    server's first cell ~36, its 64 KiB and 1 MiB cells ~5), 34.0
    new-connection (30), 14.8 resumed (10)."""
    cap = max(3, int(round(warm_cap(opts, mode) / opts.warmup_window)))
    return min(cap, 3 if opts.quick else WARM_WINDOWS[mode])
