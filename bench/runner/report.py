"""report.md and the terminal table from results.json's contents."""

import os
import re

import charts
import cluster
import icount
import pq
import report_cpu
import report_flavours
import report_jmh
import report_summary as S
import suites
import targets as T
from rules import WARM_AGREE, WARM_JIT_MAX, WARM_TOL
from words import MODE_SHORT, size_label  # noqa: F401 (bench.py names cells with them)

WARM_WORDS = {"keepalive": "keep-alive", "newconn": "new-connection", "resumed": "resumed-connection"}
MODES = {"keepalive": "keep-alive (wrk)", "newconn": "new connection per request (siege)",
         "resumed": "resumed connection per request (wrk, Connection: close)"}


def targets(results):
    return T.evaluate(results)


def workloads(results):
    """Cells grouped per workload (mode, size, suite), in run order."""
    order, groups = [], {}
    for c in results["cells"]:
        k = (c["mode"], c["size"], c["suite_key"])
        if k not in groups:
            order.append(k)
            groups[k] = []
        groups[k].append(c)
    return [(k, groups[k]) for k in order]


def reference(cell, cells):
    """The SunJSSE cell a variant is compared with: same server kind and JVM."""
    want = {"BenchmarkSSLSocket": "bss-sunjsse", "BenchmarkSSLSocket (JSS)": "bss-sunjsse",
            "Netty 4.1 HTTP/1.1": "netty-jdk"}.get(cell["server"])
    if not want:
        want = "tomcat-sunjsse-25" if cell.get("jvm") == "25" else "tomcat-sunjsse"  # same JVM
    return next((c for c in cells if c["variant"] == want), None) or \
        next((c for c in cells if c["variant"] == "tomcat-sunjsse"), None)


def plain_cell(results, cell):
    floor = {"Tomcat NIO": "tomcat-plain", "nginx": "nginx-plain"}.get(cell["server"])
    if not floor:
        return None
    return next((c for c in results["cells"] if c["variant"] == floor and c["mode"] == cell["mode"]
                 and c["size"] == cell["size"]), None)


def fmt(x, nd=3):
    if x is None:
        return "–"
    if isinstance(x, float):
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.{nd}f}"
    return str(x)


def rng(c, k, nd=3):
    m, lo, hi = c.get("median", {}).get(k), c.get("min", {}).get(k), c.get("max", {}).get(k)
    if m is None:
        return "–"
    if lo is None or hi is None or len(c["reps"]) < 2:
        return fmt(m, nd)
    return f"{fmt(m, nd)} [{fmt(lo, nd)}–{fmt(hi, nd)}]"


def warm_cell(w):
    if not w:
        return "–"
    if w.get("converged"):
        return f"{w['seconds']:.0f} s"
    # "JIT": the CPU per request agreed but the compiler threads never quieted
    return f"**{w['seconds']:.0f} s cap{' (JIT)' if w.get('cap_reason') == 'jit' else ''}**"


def icount_section(results):
    ic = results.get("icount")
    if not ic:
        return []
    md = ["## Instruction counts of the engine core (callgrind)\n"]
    # a run from before the bundled flavour was counted holds the system one alone
    flavours = ic.get("flavours") or {"system": ic}
    counted = [r for r in flavours.values() if r.get("ok")]
    if counted:
        md.append(f"`tests/icount/icount.c` under `{counted[0]['command']}`, built against each flavour's core "
                  f"and OpenSSL: instructions per operation in tlsbridge's "
                  f"engines (`tb_engine_wrap`/`tb_engine_unwrap`, the handshake from `tb_engine_new` to both "
                  f"engines freed) and in plain OpenSSL over a BIO pair (`SSL_write`/`SSL_read`, `SSL_do_handshake`: "
                  f"plain OpenSSL; a resumed handshake counts one connection, both ends, the client offering the session "
                  f"its cache kept); and a native socket server's keep-alive request on loopback TCP "
                  f"(`tb_sock_read` of a ~100-byte request and `tb_sock_write` of a 1 KiB response, the server's "
                  f"side only; plain OpenSSL: `SSL_read`/`SSL_write` on `SSL_set_fd`, OpenSSL reading ahead), fixed keys and RAND, setup "
                  f"outside the counted regions. A busy machine cannot "
                  f"move them. Heap calls (malloc, calloc, realloc) and bytes asked for per operation come from a "
                  f"second build of the harness run natively.\n")
    for f, r in flavours.items():
        md.append(f"### {icount.FLAVOURS.get(f, f)}\n")
        if not r.get("ok"):
            md.append(f"**NOT AVAILABLE**: {r.get('reason')}\n")
            continue
        md.append(f"{r['openssl']}; CPU features as valgrind shows them: {r['cpu']}; {r['runs']} run(s), largest "
                  f"difference between runs {r['spread']:.4%}.\n")
        md += icount.table(r)
        md.append("")
        b = r["baseline"]
        if b["status"] == "NOT RUN":
            md.append(f"**NOT RUN**: baseline comparison: {b['why']}\n")
        else:
            md.append(f"Against `tests/icount/baseline.json` ({b['taken']}): **{b['status']}** (a tlsbridge count "
                      f"more than {icount.LIMIT:.0%} above it fails `tests/icount/run.sh`).\n")
    return md


def _cell_table(results, rows, other):
    """The rows of a per-cell table: workload, both cells, ratio, how judged."""
    md = [f"| workload | tlsbridge | ms/req | {other} | ms/req | CPU ratio [min–max] | judged on | status |",
          "|---|---|---|---|---|---|---|---|"]
    for t in rows:
        mode, size, skey = t["workload"]
        wl = f"{MODE_SHORT[mode]} {size_label(size)} {skey}"
        a, b = t.get("cells", [[None]] * 2)
        ours, theirs = t.get("ours"), t.get("theirs")
        if t.get("pairs"):
            ratio = f"{T.x(T.inv(t['ratio']))} [{T.inv(t['ratio_max']):.2f}–{T.inv(t['ratio_min']):.2f}]"
            how = f"{t['pairs']} pairs" + (f" after a {t['paired_after']}" if t.get("paired_after") else "")
        else:
            ratio = T.x(ours / theirs) if ours and theirs else "–"
            how = "medians, not paired"
        ca, cb = (T.find(results, c[0], *c[1:]) for c in (a, b)) if a[0] else (None, None)
        ma, mb = S.mark(ca or {}), S.mark(cb or {})
        md.append(f"| {wl} | {a[0]}{ma} | {fmt(ours, 4)} | {b[0]}{mb} | {fmt(theirs, 4)} | {ratio} | "
                  f"{how} | **{t['status']}** |")
    md.append("")
    return md


def item1_section(results):
    """Item 1, one row per compared cell."""
    rows = [t for t in results.get("targets", []) if t.get("item") == 1]
    if not rows:
        return []
    return ["## Every cell against SunJSSE (CPU per request)\n",
            "CPU ratio = tlsbridge's CPU per request over SunJSSE's (at most 1.00x passes): the median of the "
            "per-pair ratios with [min–max] for paired cells, else the ratio of the cells' medians (not paired). A "
            "cell not planned as paired whose medians missed is paired after the fact, while the run's budget lasts "
            "(`--repair-max`).\n"] + _cell_table(results, rows, "SunJSSE")


def peer_section(results):
    """What users pick instead, one row per peer and cell both serve."""
    rows = [t for t in results.get("targets", []) if t.get("item") == "peer"]
    if not rows:
        return []
    return [f"## {T.PEER_TABLE} (CPU per request)\n",
            "CPU ratio = tlsbridge's CPU per request over the other's in the same server (at most 1.00x passes), "
            "judged as against SunJSSE: the same cells paired, the others on the cells' medians, paired after a "
            "medians MISS while the run's budget lasts.\n"] + _cell_table(results, rows, "other")


def write(results, out):
    md = []
    meta = results["meta"]
    v = meta.get("versions", {})
    quick = meta["mode"] == "quick"
    md.append(f"# tlsbridge benchmark report ({meta['mode']} run, {meta['started']})\n")
    md += [ln for x in S.conclusion(results) for ln in ("- " + x,)]
    md.append("")
    md += S.LEGEND
    md.append("")
    md.append("## How it was measured\n")
    op = meta["options"]
    if quick:
        md.append(f"> **Quick mode**: one repetition, short runs, {op.get('pairs')} pairs per target (fewer than "
                  f"the {T.PAIRS_MIN} a verdict needs), warm-up converging on keep-alive cells only and capped at "
                  f"{op.get('warmup'):.0f} s: figures to look at, not to quote (`scripts/bench --full` takes "
                  f"75-125 minutes on a quiet machine).\n")
    md.append(f"Server pinned to CPU {meta['pinning']['server_cpu']}, load generator to CPU "
              f"{meta['pinning']['client_cpu']} (taskset). Repetitions per cell: {op['reps']}, "
              f"interleaved (variant A rep 1, B rep 1, …, A rep 2, …); {op['duration']} s timed "
              f"per repetition. Server CPU = utime+stime of the server process tree from /proc/PID/stat "
              f"around the timed window (10 ms ticks). Elapsed: {meta.get('elapsed_s', 0) / 60:.1f} min.\n")
    if "pairs" in op:
        md.append(f"Warm-up: before a cell is timed, each JVM server runs the cell's own load in "
                  f"{op.get('warmup_window')} s windows until {WARM_AGREE} windows in a row agree within "
                  f"{WARM_TOL:.0%} on CPU per request, each with the JIT compiler threads at most "
                  f"{WARM_JIT_MAX:.0%} of the server's CPU, for at most {op.get('warmup'):.0f} s on keep-alive "
                  f"cells and {op.get('warmup_handshake') or op.get('warmup'):.0f} s on handshake cells (on "
                  f"{', '.join(WARM_WORDS.get(m, m) for m in op.get('warm_modes') or [])} workloads); each table's warm-up column says how long it "
                  f"took, **cap** where it never settled (**cap (JIT)**: CPU per request had settled but Java's "
                  f"just-in-time compiler was still compiling). Targets: {op['pairs']} alternating pairs of "
                  f"{op.get('pair_duration')} s windows of the two cells, the order inside each pair drawn from "
                  f"seed {op.get('seed')} (`--seed {op.get('seed')}` repeats it); the verdict is the median of the "
                  f"per-pair ratios, [min–max] beside it, and **NOISY** when the pairs straddle the target."
                  + (" A TLS tax pairs its two TLS servers' windows, each less its server's plain-HTTP figure (the "
                     "median of `tomcat-plain` or `nginx-plain`)"
                     + (", on the primary suite only" if op["tax_pairs"] == "primary" else "")
                     + "." if op.get("tax_pairs") in ("all", "primary") else "") + "\n")

    na = results.get("not_available") or []
    if na:
        md.append("## NOT AVAILABLE in this build\n")
        for x in na:
            md.append(f"- **{x['what']}**: {x['why']}")
        md.append("")

    md.append("## Targets\n")
    md.append("Each target says its limit in words; its detail gives the measured ratio, tlsbridge's over the "
              "other's, beside the same limit as \"target <= N.NNx\" (\"<= 1.00x\": no more CPU than the other).\n")
    md.append("| status | target | detail |\n|---|---|---|")
    for t in results.get("targets", []):
        if not T.per_cell(t):
            md.append(f"| **{t['status']}** | {T.label(t)} | {t['detail']} |")
    md.append("")
    md += item1_section(results)
    md += peer_section(results)
    sc = results.get("syscalls") or {}
    if sc.get("ok"):
        md.append("## Syscalls per request\n")
        md.append(sc["table"].strip() + "\n")
    misses = [t for t in results.get("targets", []) if T.missed(t)]
    if misses:
        md.append("A MISS is reported as measured; the next section profiles each one, and each NOISY target "
                  "whose median misses.\n")
    md += icount_section(results)
    md += report_cpu.miss_profiles(results)
    md += report_cpu.tlsbridge_cpu(results)

    md.append("## Versions\n")
    md.append("| component | version |\n|---|---|")
    for k in ("jdk17", "jdk25", "openssl", "tomcat", "nginx", "siege", "wrk", "jss", "nss", "conscrypt", "accp",
              "wildfly_openssl", "netty", "netty_tcnative", "jmh", "perf", "kernel", "cpu", "cpus", "tlsbridge_git", "tlsbridge_jar", "tlsbridge_probe"):
        md.append(f"| {k} | {v.get(k, '–')} |")
    md.append(f"| JVM flags (every Java server) | `{' '.join(meta['jvm_flags'])}` "
              f"(+ `{' '.join(meta['jdk25_extra_flags'])}` on JDK 25) |")
    md.append("")

    md.append("## Variants\n")
    md.append("| variant | server | provider | JVM | OpenSSL (asked; served) | available | note |\n"
              "|---|---|---|---|---|---|---|")
    # a variant's note as the runner words it now (a re-rendered run keeps
    # its measurements, not its wording)
    notes = {x.name: x.note for x in report_flavours.V.all_variants()}
    for name, d in results["variants"].items():
        d = dict(d, note=notes.get(name, d.get("note", "")))
        ossl = f"{d['openssl_flavour']}; {report_flavours.served(results, name) or 'not reported'}" \
            if d.get("openssl_flavour") else "–"
        md.append(f"| {name} | {d['server']} | {d['provider']} | {d.get('jvm') or '–'} | {ossl} | "
                  f"{'yes' if d['available'] else '**no**: ' + d['reason']} | {d.get('note', '')} |")
    md.append("")
    md += report_flavours.section(results, rng, size_label)
    md += pq.section(results)

    for (mode, size, skey), cells in workloads(results):
        s = suites.BY_KEY.get(skey, suites.PLAIN)
        title = f"{MODES[mode]}, {size_label(size)}, " + (s.label if skey != "plain" else "plain HTTP")
        md.append(f"## {title}\n")
        md.append("| variant | provider | JVM | negotiated (verified by) | req/s | MB/s | CPU ms/req | "
                  "CPU ratio, tlsbridge's over the other's | TLS tax ms/req | CPU ms/MB | p50 ms | p99 ms | errors | "
                  "limited by | warm-up | notes |")
        md.append("|" + "---|" * 16)
        rows = []
        for c in cells:
            ref = reference(c, cells)
            cpu = c.get("median", {}).get("cpu_ms_per_req")
            rps = c.get("median", {}).get("req_per_s")
            pc = plain_cell(results, c)
            tax = None
            if pc and cpu is not None and skey != "plain" and pc.get("median", {}).get("cpu_ms_per_req") is not None:
                tax = cpu - pc["median"]["cpu_ms_per_req"]
            neg = f"{c.get('protocol')} {c.get('suite')}" + (f" {c['group']}" if c.get("group") else "") \
                if c.get("protocol") else "–"
            neg = (neg if c.get("verified") else f"**UNVERIFIED** ({neg}; seen {c.get('negotiated_seen')})") + \
                f" ({'; '.join(c.get('verified_by', []))})"
            md.append(" | ".join(["", f"{c['variant']}{S.mark(c)}", c["provider"], c.get("jvm") or "–", neg,
                                  rng(c, "req_per_s", 1), rng(c, "mb_per_s", 2), rng(c, "cpu_ms_per_req", 4),
                                  S.table_ratio(c, ref, cells), fmt(tax, 4),
                                  rng(c, "cpu_ms_per_mb", 2), fmt(c.get("median", {}).get("p50_ms")),
                                  fmt(c.get("median", {}).get("p99_ms")),
                                  str(sum(r["errors"] for r in c["reps"])), c.get("bottleneck", "–"),
                                  warm_cell(c.get("warmup")), "; ".join(c.get("notes", []))]) + " |")
            if cpu is not None:
                rows.append((S.chart_label(c, cells), cpu, c["min"].get("cpu_ms_per_req", cpu), c["max"].get("cpu_ms_per_req", cpu),
                             rps or 0, bool(S.flags(c))))
        png = f"{mode}-{size}-{skey}.png"
        if charts.workload_chart(os.path.join(out, png), title, rows):
            md.append(f"\n![{title}]({png})\n")
        md.append("")

    md += cluster.report_section(results)

    md += report_jmh.section(results)

    md += report_cpu.probe_section(results, na)

    md.append("## Exact commands\n")
    md.append("Servers (one per variant and suite configuration):\n")
    md.append("```")
    for k, cmd in results["commands"]["servers"].items():
        md.append(f"# {k}\n{' '.join(cmd)}")
    md.append("```\n\nLoad generators (the last command of each mode and suite; the lua and rc files are "
              "written by bench/runner/loadgen.py):\n\n```")
    for k, cmd in results["commands"]["clients"].items():
        md.append(f"# {k}\n{' '.join(cmd)}")
    md.append("```\n")
    argv = list(meta.get("argv", []))
    if meta["mode"] == "full" and "--full" not in argv:
        argv.insert(0, "--full")  # a run from when no argument meant the full run
    md.append("Runner: `scripts/bench " + " ".join(argv) + "`\n")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def print_table(results):
    """The console summary: every cell, the targets, then the conclusion,
    so that what stays on the screen at the end is the answer."""
    print()
    print(f"{'workload':36} {'variant':38} {'req/s':>10} {'CPU ms/req':>11}  {'CPU ratio, tlsbridge over other':36} "
          f"negotiated")
    for (mode, size, skey), cells in workloads(results):
        for c in cells:
            ref = reference(c, cells)
            cpu = c.get("median", {}).get("cpu_ms_per_req")
            neg = f"{c.get('protocol')} {c.get('suite')}" if c.get("verified") else "UNVERIFIED"
            ratio = S.table_ratio(c, ref, cells) if ref else "–"
            print(f"{MODE_SHORT[mode] + ' ' + size_label(size) + ' ' + skey:36} {c['variant'] + S.mark(c):38} "
                  f"{c.get('median', {}).get('req_per_s', 0):>10.1f} {fmt(cpu, 4):>11}  {ratio:36} {neg}")
    cluster.print_rows(results)
    print()
    print("Targets (each a CPU ratio, tlsbridge's over the other's):")
    for t in results.get("targets", []):
        if T.per_cell(t) and t["status"] == "PASS":
            continue  # the summary line counts them; report.md has every row
        detail = re.sub(r"\s+", " ", t["detail"])
        print(f"{t['status']:10} {T.label(t)}")
        print(f"{'':10} {detail}")
    print()
    print("In short:")
    for ln in S.console(results):
        print(f"  {ln}")
    print()


if __name__ == "__main__":
    # re-renders report.md and the charts of a results directory from its
    # results.json (the same measurements; results.json is left as it is)
    import json
    import sys
    d = sys.argv[1] if len(sys.argv) > 1 else sys.exit("usage: bench/runner/report.py RESULTS_DIR")
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    res["targets"] = targets(res)
    write(res, d)
    print_table(res)
