"""What a run measures: presets for --quick and the default thorough run,
narrowed by the command-line options."""

import suites

PRIMARY = "t13-aes128"
# A JVM cell's warm-up has converged when this many windows in a row agree
# on CPU per request within WARM_TOL (max over min) and in each of them the
# JIT compiler threads used at most WARM_JIT_MAX of the process's CPU.
WARM_AGREE = 3
WARM_TOL = 0.05
# Handshake crypto dominates a new-connection window, so its CPU per request
# agrees within 5% while C2 still takes a fifth of the process (issue 16:
# 22% of tomcat-tlsbridge's ECDSA newconn profile). Compilation counted in a
# timed window inflates CPU per request by its share; at 2% that bias is
# under half the agreement tolerance and well under the taxes compared.
WARM_JIT_MAX = 0.02


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


KA_SIZES = [1024, 16384, 65536, 1048576]


class Group:
    """One server configuration (suite + certificate) and the cells measured
    on it: (mode, size) pairs."""

    def __init__(self, suite, cells, tls=True, all_variants=True):
        self.suite = suite
        self.cells = cells
        self.tls = tls
        # secondary suites of the full run: only variants.CORE
        self.all_variants = all_variants

    def __repr__(self):
        return f"Group({self.suite.key}, {self.cells})"


# The full run's shape per suite: every mode and size on the primary suite,
# the targets' workloads where they need a second suite, and the bulk
# cipher's cost (16 KiB keep-alive) on every other suite.
FULL = {
    "t13-aes128": ("keepalive*", "newconn", "resumed"),
    "t12-rsa-aes128": ("keepalive:1024", "newconn", "resumed"),
    "t13-aes128-ec": ("newconn",),
    "t12-ec-aes128": ("keepalive:16384", "newconn"),
}
OTHER = ("keepalive:16384",)
# The smoke check: every mode on the primary suite, TLS 1.2 handshakes (the
# client-side suite pin) on a second one.
QUICK = {"t13-aes128": ("keepalive*", "newconn", "resumed"), "t12-rsa-aes128": ("newconn",)}


def build(opts):
    quick = opts.quick
    modes = opts.modes or ["keepalive", "newconn", "resumed"]
    sizes = opts.sizes or ([1024] if quick else KA_SIZES)
    if opts.suites:
        shape = {k: ("keepalive*", "newconn", "resumed") for k in opts.suites}
    elif quick:
        shape = QUICK
    else:
        shape = {s.key: FULL.get(s.key, OTHER) for s in suites.SUITES}
    groups = []
    for k, wants in shape.items():
        cells = []
        for w in wants:
            mode, _, size = w.partition(":")
            if mode.endswith("*"):
                mode = mode[:-1]
                ns = sizes
            elif mode == "keepalive":
                ns = [int(size)] if not opts.sizes or int(size) in sizes else sizes[:1]
            else:
                ns = [opts.newconn_size]
            if mode in modes:
                cells += [(mode, n) for n in ns]
        if cells:
            groups.append(Group(suites.BY_KEY[k], cells,
                                all_variants=quick or bool(opts.suites) or k == PRIMARY))
    # the plain-HTTP floors: every (mode, size) any TLS group measures; first,
    # so that a TLS tax (targets.TAX) is judged while its TLS servers still
    # run and a missed one gets its profile
    floor = sorted({c for g in groups for c in g.cells})
    if floor:
        groups.insert(0, Group(suites.PLAIN, floor, tls=False))
    return groups


# Wall seconds per event beyond the load's own duration, from the phase
# timings of runs on the 2-vCPU machine (results.json meta.phases), rounded
# up: a server start, a group's stop, a load run's set-up and verification
# (wrk / siege), the probe's attach and calibration, a profile's perf
# start, jcmd and perf script.
COST = {"start": 1.5, "stop": 2.0, "wrk": 0.1, "siege": 0.1, "probe": 0.6, "profile": 2.0,
        "jmh_full": 250.0, "jmh_quick": 25.0, "jmh_profile": 12.0, "icount": 30.0, "syscalls": 100.0}
# measured per JVM cell in the full run of 2026-12-04 19:57 (warm_windows)
WARM_WINDOWS = {"keepalive": 25, "newconn": 34, "resumed": 15}
# profiles a full run takes at most (its --profile-max): the four always
# taken plus the cells of the missed targets, item 1's first; a MISS's own
# cells go past it (the 2026-12-05 run would have taken 4 more, ~5 s each,
# which the estimate leaves out)
FULL_PROFILES = 20
# item-1 comparisons a full run pairs after their same-run medians missed
# (its --repair-max; the run's first misses take them): 6 x 7 pairs of 2 s
# windows, at most 3.5 min
REPAIR_MAX = 6
# the JMH targets' profiles (2 targets x tlsbridge and SunJSSE) have their
# own budget: the cells' profiles, taken first, used to exhaust the shared
# one and leave item 4's misses without a profile
JMH_PROFILES = 4


def tax_paired(opts, suite_key):
    """Whether the TLS taxes of this suite's workloads get paired windows."""
    t = getattr(opts, "tax_pairs", "off")
    return t == "all" or (t == "primary" and suite_key == PRIMARY)


def jmh_profiles(opts):
    return 0 if opts.quick or opts.profile == "off" else JMH_PROFILES


def _load(mode, seconds):
    # wrk and siege take whole seconds (at least one)
    return max(1, int(round(seconds))) + COST["siege" if mode == "newconn" else "wrk"]


def warm_cap(opts, mode):
    """Seconds of load a JVM cell's warm-up may take: handshake cells have
    their own cap (--warmup-handshake)."""
    return opts.warmup_handshake if mode in ("newconn", "resumed") else opts.warmup


def warm_windows(opts, mode="keepalive"):
    """Warm-up windows a JVM cell is expected to take: --quick stops at three
    (its cap). The means per cell of the full run of 2026-12-04 19:57 (JIT
    watched, 120 s handshake cap): 24.6 keep-alive (61 cells; a server's
    first cell ~36, its 64 KiB and 1 MiB cells ~5), 34.0 new-connection (30),
    14.8 resumed (10)."""
    cap = max(3, int(round(warm_cap(opts, mode) / opts.warmup_window)))
    return min(cap, 3 if opts.quick else WARM_WINDOWS[mode])


def estimate_seconds(groups, variants, opts, parts=None):
    """Seconds the run will take; parts (a dict) receives the breakdown."""
    import targets as T
    import variants as V
    parts = {} if parts is None else parts
    repair = []  # the seconds of pairing each unplanned item-1 comparison

    def add(k, x):
        parts[k] = parts.get(k, 0.0) + x
    for g in groups:
        vs = [v for v in variants if v.tls == g.tls and any(V.serves(v, m, n, g) for m, n in g.cells)]
        if not vs:
            continue
        add("server start+stop", sum(getattr(v, "start_s", COST["start"]) for v in vs) + COST["stop"])
        names = {v.name for v in vs}
        for m, n in g.cells:
            k = sum(1 for v in vs if V.serves(v, m, n, g))
            jvm = sum(1 for v in vs if V.serves(v, m, n, g) and v.jdk)
            add(f"reps {m}", k * opts.reps * _load(m, opts.duration))
            if m in opts.warm_modes:
                add("warm-up", jvm * warm_windows(opts, m) * _load(m, opts.warmup_window))
            else:
                add("preroll", jvm * _load(m, max(opts.preroll, opts.warmup_window)))
            if opts.preroll > 0:
                add("preroll", (k - jvm) * _load(m, opts.preroll))
            paired = T.planned_pairs(m, n, g.suite.key, names)
            taxed = T.tax_pairs(m, n, g.suite.key, names) if tax_paired(opts, g.suite.key) and \
                {T.FLOOR[T.TAX_OURS], T.FLOOR[T.TAX_THEIRS]} <= {v.name for v in variants} else []
            add(f"pairs {m}", len(paired + taxed) * opts.pairs * 2 * _load(m, opts.pair_duration))
            here = {v.name for v in vs if V.serves(v, m, n, g)}
            planned = {p[0] for p in paired}
            repair += [opts.pairs * 2 * _load(m, opts.pair_duration) for a, b in T.ITEM1
                       if a in here and b in here and T.item1_name(m, n, g.suite.key, a, b) not in planned]
            probed = opts.probe == "all" or (opts.probe == "primary" and g.suite.key in (PRIMARY, "plain") and
                                             n == min(x for y, x in g.cells if y == m) and
                                             (not opts.quick or (g.suite.key == PRIMARY and m == "keepalive")))
            if probed:
                add("probe passes", k * opts.probe_passes * (_load(m, opts.duration) + COST["probe"]))
    # the worst case: the budget spent on the dearest comparisons
    worst = sorted(repair, reverse=True)[:max(0, getattr(opts, "repair_max", 0))]
    if worst:
        add("pairs after a medians MISS (at most)", sum(worst))
    if opts.profile != "off":
        n = opts.profile_max or FULL_PROFILES
        add("perf profiles", n * (_load("keepalive", opts.profile_seconds + 1) + COST["profile"]))
    if opts.jmh == "on":
        add("JMH", COST["jmh_quick" if opts.quick else "jmh_full"])
        add("perf profiles", jmh_profiles(opts) * COST["jmh_profile"])
    if opts.icount == "on":
        add("instruction counts", COST["icount"])
    if getattr(opts, "syscalls", "off") == "on":
        add("syscall counts", COST["syscalls"])
    if getattr(opts, "cluster", "off") != "off":
        import cluster
        add("cluster", cluster.estimate_seconds(opts))
    import pq
    if pq.wanted(opts, {v.name for v in variants}):
        add("post-quantum handshakes", pq.estimate_seconds(opts))
    return sum(parts.values())
