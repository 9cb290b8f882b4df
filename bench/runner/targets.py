"""The project's performance targets. A server-cell target is judged on
alternating pairs of windows of its two cells (median of the per-pair
ratios, NOISY when their min-max straddles the target), else on same-run
medians; JMH targets on JMH's scores. Each line is PASS, MISS, NOISY,
UNVERIFIED (a cell's negotiated suite was not proven) or N/A (not measured
in this run, with the reason)."""

import statistics

import jmh

TB_TOMCAT = ("tomcat-tlsbridge", "tomcat-tlsbridge-direct")
TB_INTERIM = "tomcat-tlsbridge-jsse"


def find(results, variant, mode, size, suite):
    for c in results["cells"]:
        if c["variant"] == variant and c["mode"] == mode and c["size"] == size and c["suite_key"] == suite:
            return c
    return None


def _med(c, k):
    return (c or {}).get("median", {}).get(k)


def _tb(results, mode, size, suite, metric):
    """The best TlsBridgeImplementation cell (heap or direct buffers); the
    interim provider-first JSSE path only when issue 4 is not in the build."""
    cands = [find(results, v, mode, size, suite) for v in TB_TOMCAT]
    cands = [c for c in cands if c and _med(c, metric) is not None]
    if cands:
        return min(cands, key=lambda c: _med(c, metric)), ""
    c = find(results, TB_INTERIM, mode, size, suite)
    if c and _med(c, metric) is not None:
        return c, " (interim: TLSBridge under Tomcat's JSSEImplementation; TlsBridgeImplementation not in this build)"
    return None, ""


def _passes(ratio, factor, op):
    return ratio >= factor if op == "le" else ratio > factor


def _line(name, ours, theirs, metric, factor, op="le", pairs=None):
    """ours <= theirs / factor (op le) or ours < theirs (op lt). With paired
    windows (pairs: the target's entry in results["pairs"]) the verdict is
    the median of the per-pair ratios, and NOISY when their min-max
    straddles the target; without, the ratio of the cells' medians."""
    if ours is None or theirs is None:
        missing = [n for n, c in (("tlsbridge", ours), ("reference", theirs)) if c is None]
        return {"target": name, "status": "N/A", "detail": f"not measured in this run: {', '.join(missing)}"}
    a, b = _med(ours, metric), _med(theirs, metric)
    if a is None or b is None:
        return {"target": name, "status": "N/A", "detail": "no successful repetition"}
    unverified = [c["variant"] for c in (ours, theirs) if not c.get("verified")]
    need = f"need {'>= ' + format(factor, '.2f') + 'x' if op == 'le' else '> 1.00x'}"
    ratios = [x for x in (pairs or {}).get("ratios", []) if x is not None]
    if pairs and not ratios:
        return {"target": name, "status": "N/A", "detail": f"none of the {len(pairs['ratios'])} pairs of windows "
                f"served requests on both sides ({ours['variant']} vs {theirs['variant']})"}
    extra = {}
    if ratios:
        med, lo, hi = statistics.median(ratios), min(ratios), max(ratios)
        ok = [_passes(x, factor, op) for x in ratios]
        status = "NOISY" if any(ok) and not all(ok) else ("PASS" if _passes(med, factor, op) else "MISS")
        detail = (f"{ours['variant']} vs {theirs['variant']} {metric.replace('_', ' ')}: ratio {med:.2f}x "
                  f"[{lo:.2f}–{hi:.2f}] over {len(ratios)} alternating pairs ({need}); medians {a:.4g} vs {b:.4g}")
        if status == "NOISY":
            detail += f"; the pairs straddle the target (median alone: {'PASS' if _passes(med, factor, op) else 'MISS'})"
        if len(ratios) < PAIRS_MIN:
            detail += f"; only {len(ratios)} pairs (< {PAIRS_MIN}): indicative"
        extra = {"ratio": med, "ratio_min": lo, "ratio_max": hi, "pairs": len(ratios),
                 "median_status": "PASS" if _passes(med, factor, op) else "MISS"}
    else:
        status = "PASS" if _passes(b / a, factor, op) else "MISS"
        detail = (f"{ours['variant']} {a:.4g} vs {theirs['variant']} {b:.4g} {metric.replace('_', ' ')}: "
                  f"ratio {b / a:.2f}x ({need}; medians, not paired)")
        few = min(len(ours["reps"]), len(theirs["reps"]))
        if few < 3:
            detail += f"; only {few} repetition(s): indicative, not a result"
    warm = [f"{c['variant']} {_warm_text(c['warmup'])}" for c in (ours, theirs) if c.get("warmup")]
    if warm:
        detail += "; warm-up " + ", ".join(warm)
    busy = [c["variant"] for c in (ours, theirs) if (c.get("contention") or 0) > 0.1]
    if busy:
        detail += f"; server CPU contended by other processes during {', '.join(busy)}"
    if unverified:
        status = "UNVERIFIED"
        detail += f"; negotiated suite not proven for {', '.join(unverified)}"
    return dict({"target": name, "status": status, "detail": detail, "ours": a, "theirs": b,
                 "cells": [cell_key(ours), cell_key(theirs)]}, **extra)


def missed(t):
    """A MISS, or NOISY pairs whose median misses: both get profiled."""
    return t["status"] == "MISS" or (t["status"] == "NOISY" and t.get("median_status") == "MISS")


def _warm_text(w):
    return f"{w['seconds']:.0f} s" + ("" if w.get("converged") else " (cap, not converged)")


def cell_key(c):
    return [c["variant"], c["mode"], c["size"], c["suite_key"]]


# The targets judged on server cells: (name, ours, theirs, mode, size,
# suite, metric, factor, op). ours "tb" is the best TlsBridgeImplementation
# cell (see _tb).
CELL_TARGETS = [
    ("Tomcat keep-alive 1 KiB TLS 1.3 AES-128-GCM: CPU/request <= 1/1.8 of SunJSSE",
     "tb", "tomcat-sunjsse", "keepalive", 1024, "t13-aes128", "cpu_ms_per_req", 1.8, "le"),
    ("Tomcat keep-alive 1 KiB TLS 1.3 AES-128-GCM: CPU/request <= 1/1.15 of Tomcat OpenSSL (FFM, JDK 25)",
     "tb", "tomcat-openssl-ffm", "keepalive", 1024, "t13-aes128", "cpu_ms_per_req", 1.15, "le"),
] + [t for size, label in ((65536, "64 KiB"), (1048576, "1 MiB")) for t in (
    (f"Tomcat keep-alive {label}: CPU/byte <= 1/1.3 of SunJSSE",
     "tb", "tomcat-sunjsse", "keepalive", size, "t13-aes128", "cpu_ms_per_mb", 1.3, "le"),
    (f"Tomcat keep-alive {label}: CPU/byte below Tomcat OpenSSL (FFM)",
     "tb", "tomcat-openssl-ffm", "keepalive", size, "t13-aes128", "cpu_ms_per_mb", 1.0, "lt"))] + [
    ("Tomcat new connection per request, RSA-2048: CPU/connection <= 1/1.8 of SunJSSE",
     "tb", "tomcat-sunjsse", "newconn", 1024, "t13-aes128", "cpu_ms_per_req", 1.8, "le"),
    ("Tomcat new connection per request, ECDSA P-256: CPU/connection <= 1/1.8 of SunJSSE",
     "tb", "tomcat-sunjsse", "newconn", 1024, "t13-aes128-ec", "cpu_ms_per_req", 1.8, "le"),
    ("BenchmarkSSLSocket, new connection per request (siege): CPU/connection <= 1/2.5 of SunJSSE.SSLSocket",
     "bss-tlsbridge", "bss-sunjsse", "newconn", 1024, "t13-aes128", "cpu_ms_per_req", 2.5, "le"),
    ("BenchmarkSSLSocket keep-alive 1 KiB (wrk): CPU/request <= 0.8x SunJSSE.SSLSocket",
     "bss-tlsbridge", "bss-sunjsse", "keepalive", 1024, "t13-aes128", "cpu_ms_per_req", 1 / 0.8, "le"),
    ("BenchmarkSSLSocket keep-alive 1 KiB (wrk): CPU/request no more than nginx",
     "bss-tlsbridge", "nginx", "keepalive", 1024, "t13-aes128", "cpu_ms_per_req", 1.0, "le"),
    ("Tomcat resumed connection (wrk, Connection: close): CPU/connection <= 1/1.8 of SunJSSE",
     "tb", "tomcat-sunjsse", "resumed", 1024, "t13-aes128", "cpu_ms_per_req", 1.8, "le"),
]
# fewer paired windows than this make a verdict indicative (--quick)
PAIRS_MIN = 7


def _cells(r, t):
    name, ours, theirs, mode, size, suite, metric = t[:7]
    why = ""
    if ours == "tb":
        oc, why = _tb(r, mode, size, suite, metric)
    else:
        oc = find(r, ours, mode, size, suite)
    return oc, find(r, theirs, mode, size, suite), why


def pairings(results, mode, size, suite):
    """The targets judged on this workload whose two cells were measured:
    (target name, our variant, their variant, metric) for paired windows."""
    out = []
    for t in CELL_TARGETS:
        if t[3:6] != (mode, size, suite):
            continue
        oc, tc, _ = _cells(results, t)
        if oc and tc and _med(oc, t[6]) is not None and _med(tc, t[6]) is not None:
            out.append((t[0], oc["variant"], tc["variant"], t[6]))
    return out


def evaluate(results):
    out = []
    r = results
    for t in CELL_TARGETS:
        oc, tc, why = _cells(r, t)
        pairs = (r.get("pairs") or {}).get(t[0])
        if pairs and oc and tc and (pairs["ours"], pairs["theirs"]) != (oc["variant"], tc["variant"]):
            pairs = None
        ln = _line(t[0], oc, tc, t[6], t[7], t[8], pairs)
        ln["detail"] += why
        out.append(ln)
    # JMH
    j = r.get("jmh") or {}
    for buf in ("heap", "direct"):
        out.append(_jmh_line(j, f"JMH wrap+unwrap 1 KiB ({buf}): >= 2x SunJSSE throughput", "wrapUnwrap",
                             {"size": "1024", "buffers": buf}, 2.0))
    for key, label in (("rsa", "RSA-2048"), ("ec", "ECDSA P-256")):
        out.append(_jmh_line(j, f"JMH full handshakes/s ({label}): >= 4x SunJSSE", "handshake", {"key": key}, 4.0))
    return out


def _jmh_line(j, name, bench, params, factor):
    if not j.get("ok"):
        return {"target": name, "status": "N/A", "detail": "JMH " + (j.get("reason") or "not run")}
    ratio, a, b = jmh.ratio(j, bench, params)
    if ratio is None:
        return {"target": name, "status": "N/A", "detail": "not measured in this run"}
    return {"target": name, "status": "PASS" if ratio >= factor else "MISS",
            "detail": f"TLSBridge {a:,.0f} vs SunJSSE {b:,.0f} ops/s: {ratio:.2f}x (need >= {factor:.1f}x)",
            "ours": a, "theirs": b, "jmh": {"bench": bench, "params": params}}
