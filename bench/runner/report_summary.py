"""The report's first screen: the conclusion (what was compared on which
machine, and how much CPU tlsbridge saves or costs per keep-alive request
and per new connection against each other server), the legend, and the
marks of a figure that is not clean, which the console, the tables and the
charts all print the same way.

Every ratio here and in the rest of the report has one direction: a CPU
ratio, the first server's CPU over the second's (tlsbridge's over the
other's), so below 1.00x tlsbridge is cheaper."""

import datetime

import targets as T
from rules import PRIMARY
from words import MODE_SHORT, size_label

# each other server and the tlsbridge server it is compared with (same
# server program, same JVM where there is one)
COUNTERPART = {"tomcat-sunjsse": "tomcat-tlsbridge", "tomcat-openssl-ffm": "tomcat-tlsbridge-25",
               "nginx": "tomcat-tlsbridge", "tomcat-sunjsse-25": "tomcat-tlsbridge-25",
               "springboot-sunjsse": "springboot-tlsbridge", "bss-sunjsse": "bss-tlsbridge",
               "jss-legacy": "bss-tlsbridge", "tomcat-conscrypt": "tomcat-tlsbridge",
               "tomcat-sunjsse-accp": "tomcat-tlsbridge", "tomcat-wildfly-openssl": "tomcat-tlsbridge",
               "bss-sunjsse-vt": "bss-tlsbridge-vt",
               "bss-tlsbridge-25": "bss-tlsbridge-vt", "netty-openssl": "netty-tlsbridge",
               "netty-jdk": "netty-tlsbridge"}
# the JDK 25 comparison falls back to the JDK 17 server when the run has
# no tlsbridge on 25 (the quick run)
FALLBACK = {"tomcat-tlsbridge-25": "tomcat-tlsbridge"}
NAMES = {"tomcat-sunjsse": "SunJSSE in Tomcat", "tomcat-openssl-ffm": "Tomcat's OpenSSL engine",
         "nginx": "nginx", "tomcat-sunjsse-25": "SunJSSE on JDK 25", "springboot-sunjsse": "SunJSSE in Spring Boot",
         "bss-sunjsse": "SunJSSE's socket server", "jss-legacy": "Mozilla JSS's socket server",
         "tomcat-tlsbridge": "tlsbridge in Tomcat", "tomcat-tlsbridge-25": "tlsbridge in Tomcat on JDK 25",
         "springboot-tlsbridge": "tlsbridge in Spring Boot", "bss-tlsbridge": "tlsbridge's bare socket server",
         "tomcat-conscrypt": "Conscrypt in Tomcat", "tomcat-sunjsse-accp": "SunJSSE over ACCP in Tomcat",
         "tomcat-wildfly-openssl": "wildfly-openssl in Tomcat",
         "bss-sunjsse-vt": "SunJSSE's socket server on virtual threads",
         "bss-tlsbridge-vt": "tlsbridge's bare socket server on virtual threads",
         "bss-tlsbridge-25": "the same on platform threads", "netty-openssl": "Netty's OpenSSL engine",
         "netty-jdk": "SunJSSE in Netty", "netty-tlsbridge": "tlsbridge in Netty"}
CONTENDED = 0.1
# the variant names the tables and charts print, in plain words (the legend)
GLOSSARY = [("tomcat-tlsbridge", "tlsbridge in Tomcat (`-direct`: direct buffers, `-25`: on JDK 25, `-system`: "
                                 "system OpenSSL)"),
            ("tomcat-sunjsse", "SunJSSE in Tomcat (`-accp`: over Amazon's ACCP)"),
            ("tomcat-conscrypt", "Conscrypt"), ("tomcat-wildfly-openssl", "wildfly-openssl"), ("tomcat-openssl-ffm", "Tomcat's OpenSSL engine"),
            ("springboot-…", "Spring Boot"), ("bss-…", "a bare socket server (`-vt`: virtual threads)"),
            ("jss-legacy", "the same on Mozilla JSS"), ("netty-…", "Netty (`-openssl`: its OpenSSL engine, `-jdk`: "
                                                               "SunJSSE)"), ("…-plain", "no TLS")]


def flags(c):
    """What makes a cell's figure not clean, as short words."""
    out = []
    if (c.get("contention") or 0) > CONTENDED:
        out.append("CONTENDED")
    if c.get("reps") and not c.get("verified"):
        out.append("UNVERIFIED")
    if c.get("still_warming"):
        out.append("STILL WARMING")
    return out


def mark(c):
    """The mark after a cell's name, the same on the console, in the tables
    and in the charts: '' or ' [CONTENDED]'."""
    f = flags(c)
    return f" [{', '.join(f)}]" if f else ""


def _cpu(c):
    return (c or {}).get("median", {}).get("cpu_ms_per_req")


def tlsbridge_over(cell, cells):
    """For a cell of another server: (tlsbridge variant, its CPU per request
    over this cell's), both from the repetitions' medians on the cell's
    workload (cells); None for tlsbridge's own cells and where no tlsbridge
    counterpart was measured."""
    ours = COUNTERPART.get(cell["variant"])
    if not ours:
        return None
    oc = next((c for c in cells if c["variant"] == ours), None)
    if oc is None and ours in FALLBACK:
        ours = FALLBACK[ours]
        oc = next((c for c in cells if c["variant"] == ours), None)
    a, b = _cpu(oc), _cpu(cell)
    return (ours, a / b) if a and b else None


def chart_label(cell, cells):
    """A bar's name in a workload chart, so that every ratio on it reads as
    in the text (tlsbridge's CPU over the other's): another server's bar
    says what tlsbridge's counterpart costs against it; a tlsbridge bar
    gives its own CPU per request; both carry the cell's mark."""
    name = cell["variant"] + mark(cell)
    cpu = _cpu(cell)
    if cell.get("provider") == "TLSBridge":
        return f"{name}  {cpu:#.4g} ms" if cpu else name
    t = tlsbridge_over(cell, cells)
    return f"{name}: {t[0]} {t[1]:.2f}x this" if t else name


def table_ratio(cell, ref, cells):
    """The workload table's ratio cell, tlsbridge's CPU over the other's:
    a tlsbridge row over its SunJSSE reference (ref), another server's row
    under its tlsbridge counterpart."""
    if cell.get("provider") == "TLSBridge":
        a, b = _cpu(cell), _cpu(ref)
        return f"this / {ref['variant']}: {a / b:.2f}x" if a and b and ref is not cell else "–"
    t = tlsbridge_over(cell, cells)
    return f"{t[0]} / this: {t[1]:.2f}x" if t else "–"


def _find(results, variant, mode, size, suite):
    return next((c for c in results["cells"] if (c["variant"], c["mode"], c["size"], c["suite_key"]) ==
                 (variant, mode, size, suite)), None)


def comparisons(results, mode, size=1024, suite=PRIMARY):
    """[(other, tlsbridge, ratio, flagged, paired)] on one workload:
    tlsbridge's CPU per request over each other server's, in the run's
    order; the pairs' median where a target paired the two cells, else the
    ratio of the repetitions' medians (the workload tables')."""
    # where the two cells were paired, the pairs' median beats the medians
    paired = {tuple(tuple(k) for k in t["cells"]): t["cpu_ratio"] for t in results.get("targets", [])
              if t.get("pairs") and t.get("cpu_ratio") and t.get("cells") and not t.get("jmh")
              and "tax" not in t["target"]}
    out = []
    for c in results["cells"]:
        if (c["mode"], c["size"], c["suite_key"]) != (mode, size, suite) or c["variant"] not in COUNTERPART:
            continue
        ours = COUNTERPART[c["variant"]]
        oc = _find(results, ours, mode, size, suite)
        if oc is None and ours in FALLBACK:
            ours = FALLBACK[ours]
            oc = _find(results, ours, mode, size, suite)
        a, b = _cpu(oc), _cpu(c)
        if a and b:
            key = ((ours, mode, size, suite), (c["variant"], mode, size, suite))
            out.append((c["variant"], ours, paired.get(key, a / b), bool(flags(c) or flags(oc)), key in paired))
    return out


def _line(results, mode):
    comps = comparisons(results, mode)
    if not comps:
        return None
    by_ours = {}
    for other, ours, r, bad, paired in comps:
        # what it saves or costs in percent; past 2x the ratio says it better
        notes = ([f"{(r - 1) * 100:+.0f}%".replace("-", "−")] if r < 2 else []) + \
            (["paired"] if paired else []) + (["not clean"] if bad else [])
        by_ours.setdefault(ours, []).append(f"{r:.2f}x {NAMES.get(other, other)}"
                                            + (f" ({', '.join(notes)})" if notes else ""))
    text = "; ".join(f"{NAMES.get(o, o)} {', '.join(v)}" for o, v in by_ours.items())
    missing = [NAMES.get(c["variant"], c["variant"]) for c in results["cells"]
               if (c["mode"], c["size"], c["suite_key"]) == (mode, 1024, PRIMARY) and c["variant"] in COUNTERPART
               and c["variant"] not in {x[0] for x in comps}]
    return text + (f"; no figure for {', '.join(missing)}" if missing else "")


def _peers(results):
    """The verdict against each peer a user would pick instead, in one
    line; None when the run measured none of them."""
    ts = [t for t in results.get("targets", []) if t.get("summary_of") == "peer"]
    if not any(t["status"] != "N/A" for t in ts):
        return None
    out = []
    for t in ts:
        if t["status"] == "N/A":
            out.append(f"{t['peer_words']}: not in this run")
            continue
        rows = [r for r in results["targets"] if r.get("item") == "peer" and r.get("peer") == t["peer"]]
        bad = [f"{MODE_SHORT[r['workload'][0]]} {size_label(r['workload'][1])} {T.x(r.get('cpu_ratio'))}"
               for r in rows if r["status"] in ("MISS", "NOISY")]
        out.append(f"{t['peer_words']} **{t['status']}** ({len(rows)} cells"
                   + (f"; not met or noisy: {', '.join(bad)}" if bad else "") + ")")
    return ("**Against what users pick instead** (tlsbridge no more CPU per request than each, in every cell both "
            "serve): " + "; ".join(out) + ".")


def conclusion(results):
    """At most six lines of markdown: what, where, and the CPU it saves or
    costs per keep-alive request and per new connection."""
    meta = results["meta"]
    v = meta.get("versions") or {}
    quick = meta.get("mode") == "quick"
    try:
        when = datetime.datetime.fromisoformat(meta["started"]).strftime("%Y-%m-%d %H:%M")
    except (KeyError, ValueError):
        when = meta.get("started", "")
    others = [NAMES[n] for n in COUNTERPART if any(c["variant"] == n for c in results["cells"])]
    others = [("SunJSSE (Java's built-in TLS)" + x[len("SunJSSE"):]) if i == 0 and x.startswith("SunJSSE") else x
              for i, x in enumerate(others)]
    cpu = v.get("cpu") or "an unnamed CPU"
    lines = [f"**What**: tlsbridge (a Java TLS provider running OpenSSL) against {', '.join(others) or 'nothing'}, "
             f"on TLS 1.3 AES-128-GCM with an RSA-2048 certificate and 1 KiB responses; {cpu}, "
             f"{v.get('cpus') or '?'} CPUs (server on one, load generator on the other); "
             + (f"quick run of {when}: one short window per figure, so read the figures as rough."
                if quick else f"full run of {when} ({meta.get('elapsed_s', 0) / 60:.0f} min).")]
    for mode, what in (("keepalive", "Per keep-alive request"), ("newconn", "Per new connection, a full handshake")):
        ln = _line(results, mode)
        lines.append(f"**{what}** (CPU ratio, lower is better): {ln}." if ln else
                     f"**{what}**: not measured in this run.")
    peers = _peers(results)
    if peers:
        lines.append(peers)
    ts = [t for t in results.get("targets", []) if not T.per_cell(t)]
    if ts:
        n = {s: sum(1 for t in ts if t["status"] == s) for s in ("PASS", "NOISY", "MISS", "UNVERIFIED", "N/A")}
        lines.append("**Targets**: " + ", ".join(f"{k} {s}" for s, k in n.items() if k)
                     + " (the table \"Targets\" below).")
    bad = [c for c in results["cells"] if flags(c)]
    if bad:
        kinds = {f: sum(1 for c in bad if f in flags(c)) for f in ("CONTENDED", "UNVERIFIED", "STILL WARMING")}
        head = [f"{c['variant']} {MODE_SHORT[c['mode']]}{mark(c)}" for c in bad
                if (c["size"], c["suite_key"]) == (1024, PRIMARY) and c["mode"] in ("keepalive", "newconn")]
        busy = kinds["CONTENDED"] > len(results["cells"]) / 2
        lines.append(f"**Not clean**: {len(bad)} of {len(results['cells'])} server-workload cells ("
                     + ", ".join(f"{n} [{f}]" for f, n in kinds.items() if n) + "), marked wherever they are shown"
                     + ("; other processes kept the machine busy, so the ratios above say little: run it again on "
                        "an idle machine." if busy else
                        f"; above: {', '.join(head[:3])}{', …' if len(head) > 3 else ''}." if head else
                        "; none of them above."))
    return lines[:6]


LEGEND = [
    "**How to read it**",
    "- **CPU ratio**: tlsbridge's CPU per request over the other server's, same machine, same run: 0.50x = half "
    "the CPU, 2.00x = twice; the percentage is what tlsbridge saves (−) or costs (+). Every ratio here, charts "
    "included, reads this way; JMH's are of time per operation, each engine's client and server its own.",
    "- **Pair ratio**: the two servers run in alternating windows, one ratio per pair; \"paired\" ratios are the "
    "median of those ratios. The other ratios, text and charts, divide the two servers' median repetitions.",
    "- **PASS**: the target holds (in every pair, where paired).",
    "- **NOISY**: some pairs meet the target, some do not (noise as large as the difference).",
    "- **MISS**: the target does not hold; below 1.00x it means tlsbridge saves CPU, but less than the target asks.",
    "- **TLS tax**: what TLS adds to a server's CPU per request: its CPU minus the same server's over plain HTTP.",
    "- **[CONTENDED]**: other processes used over 10% of the server's CPU; **[STILL WARMING]**: repetitions kept "
    "falling; **UNVERIFIED**: TLS version and suite not proven, not counted; **N/A**: not measured (the line says why).",
    "- **Names**: " + "; ".join(f"`{n}` {w}" for n, w in GLOSSARY) + ".",
]


def first_screen(results):
    return conclusion(results) + [""] + LEGEND


def console(results):
    """The conclusion and the shortest legend for the terminal."""
    strip = (lambda s: s.replace("**", "").replace("`", ""))
    return [strip(x) for x in conclusion(results)] + [
        "CPU ratio = tlsbridge's CPU over the other's (lower is better; −/+ = saves/costs). PASS: target met; "
        "NOISY: pairs disagree; MISS: not met; [CONTENDED]: other processes shared the server's CPU."]


def workload_title(mode, size):
    return f"{MODE_SHORT[mode]} {size_label(size)}"
