"""What a run measures: presets for --quick and the default thorough run,
narrowed by the command-line options."""

import jmh
import suites
import targets as T
import variants as V
from rules import COST, PRIMARY, load_seconds as _load, warm_windows

KA_SIZES = [1024, 16384, 65536, 1048576]


class Group:
    """One server configuration (suite + certificate) and the cells measured
    on it: (mode, size) pairs."""

    def __init__(self, suite, cells, tls=True, all_variants=True, quick=False):
        self.suite = suite
        self.quick = quick  # the quick run's group (variants.serves narrows the peers)
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
                                all_variants=quick or bool(opts.suites) or k == PRIMARY, quick=quick))
    # the plain-HTTP floors: every (mode, size) any TLS group measures; first,
    # so that a TLS tax (targets.TAX) is judged while its TLS servers still
    # run and a missed one gets its profile
    floor = sorted({c for g in groups for c in g.cells})
    if floor:
        groups.insert(0, Group(suites.PLAIN, floor, tls=False))
    return groups


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


def estimate_seconds(groups, variants, opts, parts=None, per_group=None, extras=None):
    """Seconds the run will take; parts (a dict) receives the breakdown,
    per_group (a list) each group's own seconds in order (what the live
    progress counts down), and parts' keys after the groups' are the phases
    that follow them. extras ({part: seconds}) are the steps whose cells
    plan themselves (the cluster, the post-quantum handshakes: the caller
    asks cluster.py and pq.py), so that planning never imports them."""
    parts = {} if parts is None else parts
    per_group = [] if per_group is None else per_group
    repair = []  # the seconds of pairing each unplanned item-1 comparison

    def add(k, x):
        parts[k] = parts.get(k, 0.0) + x
    for g in groups:
        before = sum(parts.values())
        vs = [v for v in variants if v.tls == g.tls and any(V.serves(v, m, n, g) for m, n in g.cells)]
        if not vs:
            per_group.append(0.0)
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
            repair += [opts.pairs * 2 * _load(m, opts.pair_duration) for a, b, name_of in T.compared()
                       if a in here and b in here and name_of(m, n, g.suite.key, a, b) not in planned]
            probed = opts.probe == "all" or (opts.probe == "primary" and g.suite.key in (PRIMARY, "plain") and
                                             n == min(x for y, x in g.cells if y == m) and
                                             (not opts.quick or (g.suite.key == PRIMARY and m == "keepalive")))
            if probed:
                add("probe passes", k * opts.probe_passes * (_load(m, opts.duration) + COST["probe"]))
        per_group.append(sum(parts.values()) - before)
    # the worst case: the budget spent on the dearest comparisons
    worst = sorted(repair, reverse=True)[:max(0, getattr(opts, "repair_max", 0))]
    if worst:
        add("pairs after a medians MISS (at most)", sum(worst))
    if opts.profile != "off":
        n = opts.profile_max or FULL_PROFILES
        add("perf profiles", n * (_load("keepalive", opts.profile_seconds + 1) + COST["profile"]))
    if opts.jmh == "on":
        add("JMH", jmh.parameter_sets(opts.quick) * COST["jmh_set_quick" if opts.quick else "jmh_set_full"])
        add("perf profiles", jmh_profiles(opts) * COST["jmh_profile"])
    if opts.icount == "on":
        add("instruction counts", COST["icount"])
    if getattr(opts, "syscalls", "off") == "on":
        add("syscall counts", COST["syscalls"])
    for k, x in (extras or {}).items():
        add(k, x)
    return sum(parts.values())
