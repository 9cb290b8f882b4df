#!/usr/bin/env python3
"""Checks of what a reader sees, without running a server (a few seconds;
tests/bench/run.sh runs it first): the runner's modules import one another
without a circle; the report re-rendered from the committed full run opens
with a conclusion of at most six lines and a legend; every ratio is
tlsbridge's CPU over the other's; no issue numbers or internal item names; a
contended cell is marked alike on the console, in its table and in its
chart; the live progress line says phase, elapsed and what is left, and
comes by itself when a step is silent. Prints one line per check and
`REPORT N M` (passed, failed)."""

import ast
import contextlib
import copy
import glob
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RUNNER = os.path.join(ROOT, "bench", "runner")
sys.path.insert(0, RUNNER)
import charts  # noqa: E402
import progress  # noqa: E402
import report  # noqa: E402
import report_jmh  # noqa: E402
import report_summary  # noqa: E402
import targets  # noqa: E402

from checks import check, finish  # noqa: E402


# -- the import graph: every import of a runner module, at any depth of the
# file (a function-level import is still a dependency)
mods = {os.path.basename(p)[:-3]: p for p in glob.glob(os.path.join(RUNNER, "*.py"))}
graph = {}
for m, p in mods.items():
    deps = set()
    for n in ast.walk(ast.parse(open(p).read())):
        if isinstance(n, ast.Import):
            deps |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.module:
            deps.add(n.module.split(".")[0])
    graph[m] = deps & set(mods) - {m}


def cycle():
    state = {}

    def visit(m, path):
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return path + [m, d]
            if d not in state:
                found = visit(d, path + [m])
                if found:
                    return found
        state[m] = 2
        return None
    for m in sorted(graph):
        if m not in state:
            found = visit(m, [])
            if found:
                return found
    return None


c = cycle()
check("the runner's modules import one another without a circle", c is None, " -> ".join(c or []))
check("rules.py, which the plan and the cells share, imports no runner module", not graph.get("rules"),
      graph.get("rules"))
check("planning does not import the cells it plans (plan.py imports neither cluster.py nor pq.py)",
      not graph["plan"] & {"cluster", "pq", "bench", "measure", "report"}, graph["plan"])

# -- the report, re-rendered from the committed full run
src = os.path.join(ROOT, "bench", "results", "latest", "results.json")
res = json.load(open(src))
# one contended cell, to see it marked everywhere: tlsbridge's keep-alive
# 1 KiB pair on the primary suite
KA = ("keepalive", 1024, "t13-aes128")
sun = next(c for c in res["cells"] if (c["variant"], c["mode"], c["size"], c["suite_key"]) == ("tomcat-sunjsse",) + KA)
sun["contention"] = 0.35
res["targets"] = report.targets(res)
out = tempfile.mkdtemp(prefix="tb-report-check.")
charted = {}
real_chart = charts.workload_chart


def spy(path, title, rows):
    charted[os.path.basename(path)] = rows
    return real_chart(path, title, rows)


try:
    charts.workload_chart = spy
    report.write(copy.deepcopy(res), out)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        report.print_table(res)
    console = buf.getvalue()
    md = open(os.path.join(out, "report.md")).read()
finally:
    charts.workload_chart = real_chart
    shutil.rmtree(out, ignore_errors=True)

lines = md.splitlines()
body = lines[1:]
while body and not body[0].strip():
    body = body[1:]
concl = []
for ln in body:
    if not ln.strip():
        break
    concl.append(ln)
check("report.md opens with a conclusion of at most six lines", 3 <= len(concl) <= 6, concl)
check("the conclusion says what was compared, on which CPU, per keep-alive request and per new connection",
      concl and concl[0].startswith("- **What**") and res["meta"]["versions"]["cpu"] in concl[0]
      and any("Per keep-alive request" in x for x in concl) and any("Per new connection" in x for x in concl), concl)
check("the conclusion gives tlsbridge's CPU against SunJSSE and nginx as ratios with what it saves or costs",
      all(re.search(r"\d\.\d\dx (SunJSSE in Tomcat|nginx) \([+−]\d+%", x) for x in concl[1:3]), concl[1:3])
legend = "\n".join(lines[len(concl) + 2:len(concl) + 16])
for word in ("PASS", "NOISY", "MISS"):
    check(f"the legend defines {word} on a line of its own", re.search(rf"^- \*\*{word}\*\*: ", legend, re.M), legend)
check("the legend says how a pair ratio is formed and what the TLS tax is",
      "**Pair ratio**" in legend and "**TLS tax**" in legend and "plain HTTP" in legend, legend)

internal = re.compile(r"\bissue\b|\bitem[- ]?\d|\bitems? \d|\bItem\b|\bfloor\b|need >=|"
                      r"\b[1-4]\. (No cell|TLS tax|BenchmarkSSLSocket|Native socket|JMH)", re.I)
check("no issue number, item name, unexplained floor or 'need >=' in report.md",
      not internal.findall(md), sorted(set(m.group(0) for m in internal.finditer(md))))
check("none on the console either", not internal.findall(console), internal.findall(console))
check("the console has no ratio the other way round ('vs SunJSSE 0.06x')",
      not re.search(r"vs SunJSSE:? +\d+\.\d+x", console) and "vs SunJSSE" not in console.strip().splitlines()[0])

# one direction: each target's printed ratio is tlsbridge's over the other's
bad = []
for t in res["targets"]:
    r = t.get("cpu_ratio")
    if r is not None and f"{r:.2f}x" not in t["detail"]:
        bad.append((targets.label(t), r, t["detail"][:160]))
    if t.get("jmh") and t.get("ratio") and f"{1 / t['ratio']:.2f}x" not in t["detail"]:
        bad.append((targets.label(t), t["ratio"]))
check("every target line prints its ratio as tlsbridge's CPU over the other's", not bad, bad[:3])
tb = next(t for t in res["targets"] if t.get("cells") == [["tomcat-tlsbridge", *KA], ["tomcat-sunjsse", *KA]])
check("a paired target's [min-max] is in the same direction as its median",
      tb["cpu_ratio_min"] <= tb["cpu_ratio"] <= tb["cpu_ratio_max"]
      and f"[{tb['cpu_ratio_min']:.2f}–{tb['cpu_ratio_max']:.2f}]" in tb["detail"], tb)

# the contended cell: console, workload table, chart
check("the contended cell is marked on the console",
      re.search(r"keep-alive 1 KiB t13-aes128\s+tomcat-sunjsse \[CONTENDED\]", console), console[:400])
check("... in its workload table", "| tomcat-sunjsse [CONTENDED] |" in md)
rows = charted.get("keepalive-1024-t13-aes128.png") or []
check("... and in its chart (label and colour)",
      any(r[0].startswith("tomcat-sunjsse [CONTENDED]") and r[5] for r in rows) and not any(
          r[5] for r in rows if "[" not in r[0]), [(r[0], r[5]) for r in rows])
check("the conclusion says the SunJSSE keep-alive figure is not clean",
      "not clean" in concl[1] and "tomcat-sunjsse keep-alive [CONTENDED]" in md.split("**How to read it**")[0], concl)

# -- the charts and workload tables speak the text's direction: another
# server's bar says "<tlsbridge variant> N.NNx this" (tlsbridge's CPU over
# that bar's, from the medians), a tlsbridge bar gives its own CPU
ka = [c for c in res["cells"] if (c["mode"], c["size"], c["suite_key"]) == KA]
cpu = {c["variant"]: c["median"]["cpu_ms_per_req"] for c in ka}
label_of = getattr(report_summary, "chart_label", None)
bad = [] if label_of else ["report_summary.chart_label missing"]
for c in ka if label_of else []:
    lab = label_of(c, ka)
    m = re.fullmatch(r"(\S+)( \[[A-Z, ]+\])?: (\S*tlsbridge\S*) (\d+\.\d\d)x this", lab)
    if c["provider"] == "TLSBridge":
        if not re.fullmatch(r"\S+( \[[A-Z, ]+\])?  \d\.\d+ ms", lab):
            bad.append(lab)
    elif c["variant"] in report_summary.COUNTERPART and not (
            m and m.group(1) == c["variant"] and abs(float(m.group(4)) - cpu[m.group(3)] / cpu[c["variant"]]) < 0.006):
        bad.append(lab)
check("chart labels: another server's bar reads 'tlsbridge N.NNx this', a tlsbridge bar its own CPU",
      not bad and any(" 1.78x this" in r[0] for r in rows if r[0].startswith("nginx")), bad)
check("no chart label in the old direction (a tlsbridge name followed by its ratio over SunJSSE)",
      rows and not any(re.fullmatch(r"\S*tlsbridge\S* \d\.\d\dx.*", r[0]) for r in rows), [r[0] for r in rows])
check("the chart says its ratios come from the medians of the repetitions and where the paired ones are",
      "medians of the repetitions" in getattr(charts, "SUBTITLE", "") and "paired" in getattr(charts, "SUBTITLE", ""))
tables = [ln for ln in md.splitlines() if ln.startswith("| variant | provider | JVM |")]
nginx_row = next((ln for ln in md.splitlines() if ln.strip().startswith("| nginx [CONTENDED] |")), "")
check("the workload tables print tlsbridge's CPU over the other's, never the row's over SunJSSE's",
      tables and all("CPU ratio, tlsbridge's over the other's" in t and "over SunJSSE" not in t for t in tables)
      and "| tomcat-tlsbridge / this: 1.78x |" in nginx_row, nginx_row)

# -- a target says what it asks in plain words, and a MISS where tlsbridge
# still used less says so
labels = {targets.label(t): t for t in res["targets"] if t.get("item") != 1}
check("every target names its limit in plain words ('at most' / 'no more'), none with a bare '<='",
      all(("at most" in n or "no more" in n) and "<=" not in n for n in labels), [n for n in labels if "<=" in n])
nc = next(t for t in res["targets"] if t.get("cells") == [["bss-tlsbridge", "newconn", 1024, "t13-aes128"],
                                                           ["bss-sunjsse", "newconn", 1024, "t13-aes128"]])
check("the bare socket server's new-connection target: 'at most 0.40x' SunJSSE's CPU per new connection",
      "at most 0.40x the CPU per new connection" in targets.label(nc), targets.label(nc))
check("its MISS at 0.54x says tlsbridge used less CPU, but not as much less as the target asks",
      nc["status"] == "MISS" and "not as much less as the target asks" in nc["detail"], nc["detail"])
summ = next(t for t in res["targets"] if t.get("summary_of") == 1)
check("the per-cell count says how a cell's verdict is decided and which comparisons it judges",
      "A cell passes at 1.00x or below" in summ["detail"] and "Spring Boot" in summ["detail"]
      and "not judged" in summ["detail"], summ["detail"])
jm = [t for t in res["targets"] if t.get("jmh") and t.get("ratio")]
check("the engine-alone lines give times per operation beside their time ratio",
      jm and all(re.search(r"tlsbridge [\d,]+ ns vs SunJSSE [\d,]+ ns per operation", t["detail"]) for t in jm),
      [t["detail"] for t in jm])

# -- the first screen names nothing it does not explain
first = md.split("## How it was measured")[0]
gloss = next((ln for ln in first.splitlines() if ln.startswith("- **Names**: ")), "")
named = set(re.findall(r"`([^`]+)`", gloss))


def explained(v):
    if v in named or v == "nginx":  # a product's own name needs no gloss
        return True
    if any(n.endswith("-…") and v.startswith(n[:-1]) for n in named):
        return True
    if any(n.startswith("…-") and v.endswith(n[1:]) for n in named):
        return True
    base = next((n for n in named if v.startswith(n + "-")), None)
    return base is not None and f"`{v[len(base):]}`" in gloss


unexplained = sorted({c["variant"] for c in res["cells"] if not explained(c["variant"])})
check("the legend's glossary explains every variant name the report prints", gloss and not unexplained, unexplained)
jargon = [w for w in ("figures", "native socket", "keepalive, newconn", "cap (JIT)") if w in first]
check("no jargon on the first screen (figures, native socket, mode ids)", not jargon, jargon)
pr = next((ln for ln in first.splitlines() if ln.startswith("- **Pair ratio**")), "")
check("the pair-ratio legend is two short sentences", pr.count(". ") + pr.endswith(".") == 2 and len(pr) < 260, pr)
# the first screen's bytes before the glossary went in (3015), plus the
# glossary's names of what users pick instead (Conscrypt, SunJSSE over ACCP: 62;
# the Netty servers: 69; wildfly-openssl: 42), plus how the JMH ratios read
# now that other engines stand beside SunJSSE there (74)
old = 3015 + 62 + 69 + 42 + 74
check(f"the first screen is no longer than before the glossary and the peers' names (18 lines, {old} bytes)",
      len(first.rstrip("\n").splitlines()) <= 18 and len(first.encode()) <= old,
      (len(first.splitlines()), len(first.encode())))

# -- what users pick instead: the committed run predates the peers, so their
# cells are made from tlsbridge's own (Conscrypt 1.25x its CPU per request,
# ACCP 0.97x on keep-alive 1 KiB, Netty's OpenSSL engine 0.9x) and rendered
peer_res = copy.deepcopy(res)
peer_res.pop("pairs", None)
PEER_MADE = {"tomcat-conscrypt": ("tomcat-tlsbridge", lambda c: 1.25), "tomcat-sunjsse-accp": (
    "tomcat-tlsbridge", lambda c: 0.97 if (c["mode"], c["size"]) == ("keepalive", 1024) else 1.3),
    "netty-tlsbridge": ("tomcat-tlsbridge", lambda c: 1.0), "netty-openssl": ("tomcat-tlsbridge", lambda c: 0.9),
    "netty-jdk": ("tomcat-tlsbridge", lambda c: 1.2)}
for name, (src_v, f) in PEER_MADE.items():
    for c in [c for c in res["cells"] if c["variant"] == src_v and c["suite_key"] == "t13-aes128"
              and (c["mode"] != "keepalive" or c["size"] <= 65536)]:
        m = dict(c["median"], cpu_ms_per_req=c["median"]["cpu_ms_per_req"] * f(c))
        peer_res["cells"].append(dict(copy.deepcopy(c), variant=name, median=m, min=m, max=m,
                                      provider="TLSBridge" if name == "netty-tlsbridge" else name,
                                      server="Netty 4.1 HTTP/1.1" if name.startswith("netty") else c["server"]))
    peer_res["variants"][name] = {"server": "-", "provider": name, "jvm": "17", "tls": True, "available": True,
                                  "reason": "", "note": ""}
peer_res["targets"] = report.targets(peer_res)
out = tempfile.mkdtemp(prefix="tb-report-check.")
try:
    report.write(copy.deepcopy(peer_res), out)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        report.print_table(peer_res)
    pmd, pcon = open(os.path.join(out, "report.md")).read(), buf.getvalue()
finally:
    shutil.rmtree(out, ignore_errors=True)
pconcl = []
for ln in pmd.splitlines()[2:]:
    if not ln.strip():
        break
    pconcl.append(ln)
peer_line = next((ln for ln in pconcl if "what users pick instead" in ln), "")
check("with the peers measured, the conclusion stays at most six lines and has a line of their verdicts",
      len(pconcl) <= 6 and peer_line, pconcl)
check("... naming each peer with its verdict (Conscrypt PASS, SunJSSE over ACCP MISS with its cell, Netty's OpenSSL "
      "engine MISS)", "Conscrypt **PASS** (5 cells)" in peer_line and "SunJSSE over ACCP **MISS** (5 cells; not met "
      "or noisy: keep-alive 1 KiB 1.03x)" in peer_line and "Netty's OpenSSL engine **MISS**" in peer_line, peer_line)
psum = [t for t in peer_res["targets"] if t.get("summary_of") == "peer"]
rows = [t for t in peer_res["targets"] if t.get("item") == "peer"]
check("the targets table has one line per peer, its limit in plain words, and the console prints it",
      len(psum) == len(targets.PEER) and all(f"| **{t['status']}** | {targets.label(t)} |" in pmd and "at most 1.00x"
                                             in targets.label(t) and targets.label(t) in pcon for t in psum),
      [targets.label(t) for t in psum])
check("a table has one row per peer and cell both serve (5 Conscrypt, 5 ACCP, 5 Netty), ratios tlsbridge's over the "
      "other's", f"## {targets.PEER_TABLE}" in pmd and len(rows) == 15 and all(
          f"| {t['cells'][1][0]} | " in pmd and f"{t['cpu_ratio']:.2f}x" in t["detail"] for t in rows),
      [(t["target"], t.get("cpu_ratio")) for t in rows][:4])
check("Netty's JDK mode on tlsbridge is held to SunJSSE in Netty too",
      any(t.get("cells", [[None]])[0][0] == "netty-tlsbridge" and t["cells"][1][0] == "netty-jdk"
          for t in peer_res["targets"] if t.get("item") == 1))
check("the Netty rows of a workload table give tlsbridge's CPU over each Netty engine's",
      re.search(r"\| netty-openssl \|.*\| netty-tlsbridge / this: 1\.11x \|", pmd)
      and re.search(r"\| netty-tlsbridge \|.*\| this / netty-jdk: 0\.83x \|", pmd))
check("no issue number or item name with the peers either", not internal.findall(pmd),
      sorted(set(m.group(0) for m in internal.finditer(pmd))))

# -- the engine benchmark with the peers' engines beside SunJSSE's: each
# row's time ratio is tlsbridge's over that row's engine, the classes the
# setups checked are shown, and what was not measured says why
jres = copy.deepcopy(res)
jrows = [dict(r, params=dict(r["params"])) for r in jres["jmh"]["results"]]
t_heap = next(r for r in jrows if r["benchmark"].endswith("wrapUnwrap") and r["params"] ==
              {"provider": "TLSBridge", "size": "1024", "buffers": "heap"})
for prov, f in (("Conscrypt", 2.0), ("Netty-OpenSSL", 0.8)):
    jrows.append(dict(t_heap, params=dict(t_heap["params"], provider=prov), score=t_heap["score"] * f))
jres["jmh"].update(results=jrows, engines={"Conscrypt": {"client": "org.conscrypt.Java8EngineWrapper",
                                                         "server": "org.conscrypt.Java8EngineWrapper",
                                                         "library": "Conscrypt 2.5.2"}},
                   versions={"conscrypt": "2.5.2"}, failed=[{"benchmark": "HandshakeBench.handshake",
                                                             "params": {"provider": "Netty-OpenSSL", "key": "ec"},
                                                             "error": "java.lang.IllegalStateException: boom"}],
                   not_served=[{"provider": "wildfly-openssl", "key": "ec", "why": "no ECDSA key"}])
jmd = "\n".join(report_jmh.section(jres))
check("JMH with the peers: a row per engine, tlsbridge's time over each other engine's, classes checked, what was "
      "not measured with why",
      re.search(r"\| WrapUnwrapBench.wrapUnwrap \| Conscrypt \| buffers=heap size=1024 \|.*\| TLSBridge / this: 2\.00x \|",
                jmd) and re.search(r"\| Netty-OpenSSL \| buffers=heap size=1024 \|.*\| TLSBridge / this: 0\.80x \|", jmd)
      and re.search(r"\| TLSBridge \| buffers=heap size=1024 \|.*\| this / SunJSSE: \d\.\d\dx \|", jmd)
      and "| Conscrypt | `org.conscrypt.Java8EngineWrapper`; `org.conscrypt.Java8EngineWrapper` | Conscrypt 2.5.2 | "
          "conscrypt 2.5.2 |" in jmd
      and "- wildfly-openssl handshakes with key=ec: no ECDSA key" in jmd
      and "- HandshakeBench.handshake key=ec provider=Netty-OpenSSL: java.lang.IllegalStateException: boom" in jmd
      and "Conscrypt and Netty's OpenSSL engine take no TLS 1.3 suite list" in jmd, jmd[:1500])

# -- the live progress line
said = []
p = progress.Progress(600.0, time.monotonic() - 65, said.append)
p.begin("servers 1/3, plain HTTP", 100.0)
p.at("workload 1/2: keep-alive 1 KiB")
ln = p.line()
check("a progress line names the phase and cell, the elapsed time and what is left",
      said and "servers 1/3" in said[0] and "workload 1/2: keep-alive 1 KiB" in ln and "1:05 elapsed" in ln
      and re.search(r"about (9|10):\d\d left", ln), (said, ln))
progress.HEARTBEAT_S = 0.3
beats = []
q = progress.Progress(10.0, time.monotonic(), beats.append).start()
time.sleep(1.6)
q.stop()
check("a silent step still gets a progress line by itself", len(beats) >= 1 and "still running" in beats[0], beats)
p.begin("JMH", 1.0)
p.step_t -= 5
check("past its estimate the line says so instead of 'about 0:00 left'", "past this step's estimate" in p.line()
      or "left" in p.line() and p.left() >= 30, p.line())

finish("REPORT")
