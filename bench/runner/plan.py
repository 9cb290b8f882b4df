"""What a run measures: presets for --quick and the default thorough run,
narrowed by the command-line options."""

import suites

PRIMARY = "t13-aes128"
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
QUICK = {"t13-aes128": ("keepalive*", "newconn", "resumed"), "t12-rsa-aes128": ("keepalive*", "newconn")}


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
    # the plain-HTTP floors: every (mode, size) any TLS group measures
    floor = sorted({c for g in groups for c in g.cells})
    if floor:
        groups.append(Group(suites.PLAIN, floor, tls=False))
    return groups


def estimate_seconds(groups, variants, opts):
    import variants as V
    total = 0.0
    for g in groups:
        vs = [v for v in variants if v.tls == g.tls and any(V.serves(v, m, n, g) for m, n in g.cells)]
        total += len(vs) * (3.5 + opts.warmup)
        for m, n in g.cells:
            k = sum(1 for v in vs if V.serves(v, m, n, g))
            total += k * (opts.reps * (opts.duration + 1.2) + opts.preroll)
    return total
