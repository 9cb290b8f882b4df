"""The report's sections on where server CPU goes: perf profiles behind each
missed target, tlsbridge's own Tomcat cells, and the tlsbridge-probe pass."""

import perfprofile as perfprof
import rules
import targets as T

ROLES = ("request threads", "JIT compiler", "GC + VM", "other")


def _f(x, nd=4):
    return "–" if x is None else f"{x:.{nd}f}"


def _cell(results, key):
    v, m, n, s = key
    return next((c for c in results["cells"] if (c["variant"], c["mode"], c["size"], c["suite_key"]) == (v, m, n, s)),
                None)


def _unit(cell):
    """Profiles are per request; the per-byte targets read better per MB."""
    if cell.get("jmh"):
        # a 1 KiB wrap+unwrap takes ~1.5 us: ms with four decimals hid it
        return "us/op", 1000.0
    return ("ms/MB", 1e6 / cell["size"]) if cell["size"] >= 65536 else ("ms/req", 1.0)


def jit_seen(names, profs):
    """The JIT compiler threads' share of each profiled window's CPU (from
    /proc), flagged where it was above the warm-up's limit: that profile
    shows compilation, not the steady server."""
    seen = [(n, p.get("jit_share")) for n, p in zip(names, profs) if p.get("ok") and p.get("jit_share") is not None]
    if not seen:
        return ""
    return ". JIT compiler threads in the profiled window (/proc): " + "; ".join(
        f"{n} {100 * s:.1f}%" + ("" if rules.jit_quiet(s) else " (**still compiling**)") for n, s in seen)


def compare(ours, theirs):
    """Markdown lines: the two cells' profiles side by side, per DSO bucket
    and thread role, the largest differences spelt out, then top symbols."""
    po, pt = ours.get("profile") or {}, (theirs or {}).get("profile") or {}
    if not po.get("ok"):
        return [f"No profile of {ours['variant']}: {po.get('error') or 'not taken in this run (--profile off?)'}\n"]
    unit, k = _unit(ours)
    names = [ours["variant"]] + ([theirs["variant"]] if pt.get("ok") else [])
    md = [f"| CPU {unit} by where it runs | " + " | ".join(names) + (" | difference |" if len(names) == 2 else " |"),
          "|---|" + "---|" * (len(names) + (len(names) == 2))]
    diffs = []
    for b in perfprof.BUCKETS:
        a = po["buckets_ms_per_req"].get(b)
        t = pt.get("buckets_ms_per_req", {}).get(b) if pt.get("ok") else None
        if a is None and t is None:
            continue
        row = [b, _f(a and a * k), ]
        if len(names) == 2:
            row += [_f(t and t * k), _f(((a or 0) - (t or 0)) * k)]
            diffs.append(((a or 0) - (t or 0), b))
        md.append("| " + " | ".join(row) + " |")
    tot = [po["rep"].get("cpu_ms_per_req")] + ([pt["rep"].get("cpu_ms_per_req")] if len(names) == 2 else [])
    md.append("| **total (profiled window)** | " + " | ".join(_f(x and x * k) for x in tot) +
              (f" | {_f((tot[0] - tot[1]) * k) if None not in tot else '–'} |" if len(names) == 2 else " |"))
    md.append("")
    md.append("Thread roles (share of samples): " + "; ".join(
        f"{n}: " + ", ".join(f"{r} {p['threads_pct'].get(r, 0):.0f}%" for r in ROLES if p["threads_pct"].get(r))
        for n, p in zip(names, [po, pt])) + jit_seen(names, [po, pt]))
    if diffs:
        worse = [f"{b} {d * k:+.4f}" for d, b in sorted(diffs, reverse=True) if d > 0][:3]
        better = [f"{b} {d * k:+.4f}" for d, b in sorted(diffs) if d < 0][:2]
        md.append(f"\nLargest excess of {names[0]} ({unit}): {', '.join(worse) or 'none'}; "
                  f"where it saves: {', '.join(better) or 'nowhere'}.")
    for n, p, lim in zip(names, [po, pt], (10, 6)):
        md.append(f"\nTop symbols, {n} ({p['samples']} samples, `{p['text']}`):\n")
        md.append("| % | where | symbol |\n|---|---|---|")
        md += [f"| {t['pct']:.1f} | {t['dso']} | `{t['symbol']}` |" for t in p["top"][:lim]]
    md.append("")
    return md


def miss_profiles(results):
    md = []
    misses = [t for t in results.get("targets", []) if T.missed(t)]
    if not misses:
        return md
    md.append("## Profiles of the missed targets\n")
    md.append("perf (cpu-clock, 999 Hz) on the server's CPU during one extra window of the cell's own load, the "
              "server's samples only; shares turned into CPU per request with the CPU per request of that window. "
              "`[JIT]` is JIT-compiled Java (named through the JVM's perf map); `kernel` includes the vDSO. Samples "
              "in `finish_task_switch`/`_raw_spin_unlock_irqrestore` are the context-switch path (a guest's "
              "cpu-clock lands where interrupts are re-enabled).\n")
    for t in misses:
        md.append(f"### {t['status']}: {T.label(t)}\n")
        md.append(t["detail"] + "\n")
        keys = t.get("cells") or []
        if t.get("jmh"):
            pj = ((results.get("jmh") or {}).get("profiles") or {}).get(t["target"]) or {}
            if not pj.get("ours"):
                md.append("No profile of the benchmark in this run (--profile off, the profile cap, or no perf).\n")
                continue
            md.append("The benchmark re-run alone in the JMH process (`-f 0`, 2 × 1 s warm-up, one timed "
                      "iteration) under perf; CPU per operation = 1000 / ops/s of that run.\n")
            mk = lambda side: {"variant": pj[side]["variant"], "jmh": True, "profile": pj[side]}  # noqa: E731
            md += compare(mk("ours"), mk("theirs") if pj.get("theirs") else None)
            continue
        if not keys:
            continue
        ours, theirs = _cell(results, keys[0]), _cell(results, keys[1])
        md += compare(ours, theirs) if ours else ["(cell not found)\n"]
    return md


def tlsbridge_cpu(results):
    """Where tlsbridge's CPU goes in its Tomcat keep-alive 1 KiB and
    new-connection cells (profiled in every run that takes profiles)."""
    md = []
    for mode in ("keepalive", "newconn"):
        tb = next((c for c in results["cells"] if c["variant"] == "tomcat-tlsbridge" and c["mode"] == mode
                   and c["size"] == 1024 and c["suite_key"] == "t13-aes128" and c.get("profile")), None)
        if not tb:
            continue
        if not md:
            md.append("## Where tlsbridge's CPU goes (Tomcat, TLS 1.3 AES-128-GCM, 1 KiB)\n")
        ref = next((c for c in results["cells"] if c["variant"] == "tomcat-sunjsse" and c["mode"] == mode
                    and c["size"] == 1024 and c["suite_key"] == "t13-aes128"), None)
        md.append(f"### {'keep-alive (wrk)' if mode == 'keepalive' else 'new connection per request (siege)'}\n")
        md += compare(tb, ref)
    return md


def probe_section(results, na):
    probes = [c for c in results["cells"] if c.get("probe")]
    md = ["## Probe pass (tlsbridge-probe attached)\n"]
    if not probes:
        why = next((x["why"] for x in na if x["what"] == "probe pass"), "no probe pass in this run")
        return md + [f"Not run: {why}\n"]
    md.append("Every probed pass follows a plain repetition of the same variant; the probe's cost is the median "
              "over those pairs of probed/plain (throughput, and server CPU per request from /proc). On-CPU time per request "
              "is the probe's own scheduler account (agnostic mode, the same for every provider), split by thread "
              "role; TLSBridge cells also get the library's counters (provider mode), which it hands over when it "
              "frees a connection: SSL_read+SSL_write time and JNI calls cover only the connections freed inside "
              "the window (keep-alive connections an engine user leaves to the Cleaner arrive later or never), "
              "and the handshake time is the library's wall clock around SSL_do_handshake. A shared machine "
              "scatters single pairs by more than the few % the probe costs; in client-bound cells (nginx) the "
              "probe's per-syscall cost on the client shows as lost throughput.\n")
    md.append("| workload | variant | on-CPU ms/req: request threads / JIT / GC+VM / other | syscalls/req | "
              "switches/req | TLSBridge library: handshakes (resumed) / closes; SSL_read+write ms/req; ms per handshake; JNI "
              "calls/req | probe CPU ms/req "
              "(own + in target) | probe cost: req/s with/without | probe cost: CPU/req with/without | pairs |")
    md.append("|" + "---|" * 10)
    for c in probes:
        pr = c["probe"]
        s = pr.get("summary") or {}
        per = s.get("per_request", {})
        roles = per.get("by_role_ms_per_req", {})
        tb = "–"
        if per.get("ssl_read_ms_per_req") is not None:
            tb = (f"{s.get('handshakes', 0)} ({s.get('resumed', 0)} resumed) / {s.get('closes', 0)}; "
                  f"{_f((per.get('ssl_read_ms_per_req') or 0) + (per.get('ssl_write_ms_per_req') or 0))}; "
                  f"{_f(per.get('handshake_ms_each'), 3)}; {_f(per.get('jni_calls_per_req'), 1)}")
        own = per.get("probe_cpu_ms_per_req")
        tgt = per.get("probe_target_est_ms_per_req")
        tax = pr.get("tax") or {}
        md.append(f"| {c['mode']} {c['size']} {c['suite_key']} | {c['variant']} | "
                  + " / ".join(_f(roles.get(r)) for r in ROLES) +
                  f" | {_f(per.get('syscalls_per_req'), 1)} | {_f(per.get('context_switches_in_per_req'), 2)} | {tb} | "
                  f"{_f(own)} + {_f(tgt, 5)} | {_f(tax.get('throughput_ratio'), 3)} | "
                  f"{_f(tax.get('server_cpu_per_req_ratio'), 3)} | {tax.get('pairs', 0)} |"
                  if s else f"| {c['mode']} {c['size']} {c['suite_key']} | {c['variant']} | failed: "
                  f"{'; '.join(pr.get('errors') or [pr.get('error') or '?'])} |||||||")
    ratios = [c["probe"]["tax"] for c in probes if (c["probe"].get("tax") or {}).get("throughput_ratio")]
    if ratios:
        import statistics
        cpu = [r["server_cpu_per_req_ratio"] for r in ratios if r.get("server_cpu_per_req_ratio")]
        md.append(f"\nAcross the {len(ratios)} probed cells: throughput with the probe "
                  f"{statistics.median(r['throughput_ratio'] for r in ratios):.3f}x of without (median)" +
                  (f", server CPU per request {statistics.median(cpu):.3f}x." if cpu else "."))
    md.append("\nCommand (per pass): `" + " ".join(probes[0]["probe"].get("command") or []) + "`\n")
    return md
