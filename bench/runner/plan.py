"""What a run measures: presets for --quick and the default thorough run,
narrowed by the command-line options."""

import suites

PRIMARY = "t13-aes128"
KA_SIZES = [1024, 16384, 65536, 1048576]


class Group:
    """One server configuration (suite + certificate) and the cells measured
    on it: (mode, size) pairs."""

    def __init__(self, suite, cells, tls=True):
        self.suite = suite
        self.cells = cells
        self.tls = tls

    def __repr__(self):
        return f"Group({self.suite.key}, {self.cells})"


def build(opts):
    quick = opts.quick
    modes = opts.modes or (["keepalive", "newconn", "resumed"])
    if opts.suites:
        keys = opts.suites
    elif quick:
        keys = ["t13-aes128", "t12-rsa-aes128"]  # one suite per protocol
    else:
        keys = [s.key for s in suites.SUITES]
    sizes = opts.sizes or ([1024] if quick else KA_SIZES)
    groups = []
    for k in keys:
        s = suites.BY_KEY[k]
        cells = []
        primary = k in (PRIMARY, "t12-rsa-aes128") or quick or bool(opts.suites)
        if "keepalive" in modes:
            if primary:
                cells += [("keepalive", n) for n in sizes]
            else:
                # the other suites at one size where the cipher dominates
                n = 16384 if 16384 in sizes or not opts.sizes else sizes[0]
                cells.append(("keepalive", n))
        if "newconn" in modes and (primary or k in ("t13-aes128-ec", "t12-ec-aes128")):
            cells.append(("newconn", opts.newconn_size))
        if "resumed" in modes and (k == PRIMARY or (primary and not quick)):
            cells.append(("resumed", opts.newconn_size))
        if cells:
            groups.append(Group(s, cells))
    # the plain-HTTP floors: every (mode, size) any TLS group measures
    floor = sorted({c for g in groups for c in g.cells})
    if floor:
        groups.append(Group(suites.PLAIN, floor, tls=False))
    return groups


def estimate_seconds(groups, n_tls, n_plain, opts):
    cells = sum(len(g.cells) * (n_tls if g.tls else n_plain) for g in groups)
    per_cell = opts.duration * opts.reps + opts.preroll + 1.5 * opts.reps
    starts = sum((n_tls if g.tls else n_plain) for g in groups) * (4 + opts.warmup)
    return cells * per_cell + starts
