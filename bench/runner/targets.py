"""The project's performance targets, judged on same-run medians. Each line
is PASS, MISS, UNVERIFIED (a cell's negotiated suite was not proven) or N/A
(not measured in this run, with the reason)."""

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


def _line(name, ours, theirs, metric, factor, op="le"):
    """ours <= theirs / factor (op le) or ours < theirs (op lt)."""
    if ours is None or theirs is None:
        missing = [n for n, c in (("tlsbridge", ours), ("reference", theirs)) if c is None]
        return {"target": name, "status": "N/A", "detail": f"not measured in this run: {', '.join(missing)}"}
    a, b = _med(ours, metric), _med(theirs, metric)
    if a is None or b is None:
        return {"target": name, "status": "N/A", "detail": "no successful repetition"}
    unverified = [c["variant"] for c in (ours, theirs) if not c.get("verified")]
    limit = b / factor if op == "le" else b
    ok = a <= limit if op == "le" else a < limit
    detail = (f"{ours['variant']} {a:.4g} vs {theirs['variant']} {b:.4g} {metric.replace('_', ' ')}: "
              f"ratio {b / a:.2f}x (need {'>= ' + format(factor, '.2f') + 'x' if op == 'le' else '> 1.00x'})")
    status = "PASS" if ok else "MISS"
    few = min(len(ours["reps"]), len(theirs["reps"]))
    if few < 3:
        detail += f"; only {few} repetition(s): indicative, not a result"
    busy = [c["variant"] for c in (ours, theirs) if (c.get("contention") or 0) > 0.1]
    if busy:
        detail += f"; server CPU contended by other processes during {', '.join(busy)}"
    if unverified:
        status = "UNVERIFIED"
        detail += f"; negotiated suite not proven for {', '.join(unverified)}"
    return {"target": name, "status": status, "detail": detail, "ours": a, "theirs": b,
            "cells": [cell_key(ours), cell_key(theirs)]}


def cell_key(c):
    return [c["variant"], c["mode"], c["size"], c["suite_key"]]


def evaluate(results):
    out = []
    r = results
    # 1. keep-alive 1 KiB, TLS 1.3 AES-128-GCM
    tb, why = _tb(r, "keepalive", 1024, "t13-aes128", "cpu_ms_per_req")
    for ref, f, label in (("tomcat-sunjsse", 1.8, "SunJSSE"), ("tomcat-openssl-ffm", 1.15, "Tomcat OpenSSL (FFM, JDK 25)")):
        ln = _line(f"Tomcat keep-alive 1 KiB TLS 1.3 AES-128-GCM: CPU/request <= 1/{f} of {label}", tb,
                   find(r, ref, "keepalive", 1024, "t13-aes128"), "cpu_ms_per_req", f)
        ln["detail"] += why
        out.append(ln)
    # 2. keep-alive 64 KiB and 1 MiB, CPU per byte
    for size, label in ((65536, "64 KiB"), (1048576, "1 MiB")):
        tb, why = _tb(r, "keepalive", size, "t13-aes128", "cpu_ms_per_mb")
        ln = _line(f"Tomcat keep-alive {label}: CPU/byte <= 1/1.3 of SunJSSE", tb,
                   find(r, "tomcat-sunjsse", "keepalive", size, "t13-aes128"), "cpu_ms_per_mb", 1.3)
        ln["detail"] += why
        out.append(ln)
        ln = _line(f"Tomcat keep-alive {label}: CPU/byte below Tomcat OpenSSL (FFM)", tb,
                   find(r, "tomcat-openssl-ffm", "keepalive", size, "t13-aes128"), "cpu_ms_per_mb", 1.0, op="lt")
        ln["detail"] += why
        out.append(ln)
    # 3. new connection per request, Tomcat
    for suite, label in (("t13-aes128", "RSA-2048"), ("t13-aes128-ec", "ECDSA P-256")):
        tb, why = _tb(r, "newconn", 1024, suite, "cpu_ms_per_req")
        ln = _line(f"Tomcat new connection per request, {label}: CPU/connection <= 1/1.8 of SunJSSE", tb,
                   find(r, "tomcat-sunjsse", "newconn", 1024, suite), "cpu_ms_per_req", 1.8)
        ln["detail"] += why
        out.append(ln)
    # 4. BenchmarkSSLSocket
    out.append(_line("BenchmarkSSLSocket, new connection per request (siege): CPU/connection <= 1/2.5 of "
                     "SunJSSE.SSLSocket", find(r, "bss-tlsbridge", "newconn", 1024, "t13-aes128"),
                     find(r, "bss-sunjsse", "newconn", 1024, "t13-aes128"), "cpu_ms_per_req", 2.5))
    out.append(_line("BenchmarkSSLSocket keep-alive 1 KiB (wrk): CPU/request <= 0.8x SunJSSE.SSLSocket",
                     find(r, "bss-tlsbridge", "keepalive", 1024, "t13-aes128"),
                     find(r, "bss-sunjsse", "keepalive", 1024, "t13-aes128"), "cpu_ms_per_req", 1 / 0.8))
    out.append(_line("BenchmarkSSLSocket keep-alive 1 KiB (wrk): CPU/request no more than nginx",
                     find(r, "bss-tlsbridge", "keepalive", 1024, "t13-aes128"),
                     find(r, "nginx", "keepalive", 1024, "t13-aes128"), "cpu_ms_per_req", 1.0))
    # 5. resumed connections
    tb, why = _tb(r, "resumed", 1024, "t13-aes128", "cpu_ms_per_req")
    ln = _line("Tomcat resumed connection (wrk, Connection: close): CPU/connection <= 1/1.8 of SunJSSE", tb,
               find(r, "tomcat-sunjsse", "resumed", 1024, "t13-aes128"), "cpu_ms_per_req", 1.8)
    ln["detail"] += why
    out.append(ln)
    # 6. JMH
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
