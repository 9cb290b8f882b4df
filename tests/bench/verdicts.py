#!/usr/bin/env python3
"""The verdict logic of the bench runner on made-up windows, no server
needed (tests/bench/run.sh runs it before the quick bench): paired ratios
give PASS, MISS or NOISY, a warm-up stops when three windows agree or at
its cap, and the A/B order of the pairs repeats with the seed; the cluster
cells read resumption from logged ServerHellos. Prints one line per check and "VERDICTS <passed> <failed>"."""

import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "runner"))
import bench  # noqa: E402
import measure  # noqa: E402
import plan  # noqa: E402
import report  # noqa: E402
import rules  # noqa: E402
import targets  # noqa: E402
import verify  # noqa: E402

from checks import check, finish  # noqa: E402


def trying(name, fn):
    """check() of fn's (ok, detail); fn raising (a runner without the
    function it calls) is a FAIL too, not the end of the checks."""
    try:
        ok, detail = fn()
    except (Exception, SystemExit) as e:  # noqa: BLE001 (argparse exits on an option it lacks)
        ok, detail = False, f"{type(e).__name__}: {e}"
    check(name, ok, detail)


def cell(variant, cpu, warm=None):
    return {"variant": variant, "mode": "keepalive", "size": 1024, "suite_key": "t13-aes128", "reps": [{}] * 3,
            "median": {"cpu_ms_per_req": cpu}, "verified": True, "warmup": warm}


ours, theirs = cell("tomcat-tlsbridge-direct", 0.010), cell("tomcat-sunjsse", 0.019)
for ratios, want in (([1.9, 2.0, 1.85, 2.1, 1.95, 1.9, 2.2], "PASS"), ([1.5, 1.6, 1.7, 1.4, 1.75, 1.6, 1.5], "MISS"),
                     ([1.7, 1.9, 2.0, 1.75, 1.95, 1.85, 1.9], "NOISY"), ([None] * 7, "N/A")):
    t = targets._line("t", ours, theirs, "cpu_ms_per_req", 1.8, "le",
                      {"ours": ours["variant"], "theirs": theirs["variant"], "ratios": ratios})
    check(f"pair ratios {ratios[:3]}…: {want}", t["status"] == want, t)
t = targets._line("t", ours, theirs, "cpu_ms_per_req", 1.8, "le", {"ratios": [1.7, 1.9, 2.0, 1.75, 1.95, 1.85, 1.9]})
check("NOISY prints median [min–max] and what the median alone says",
      "over tomcat-sunjsse's: 0.53x [0.50–0.59] over 7 alternating pairs" in t["detail"] and t["median_status"] == "PASS"
      and not targets.missed(t), t["detail"])
t = targets._line("t", ours, theirs, "cpu_ms_per_req", 1.0, "lt", {"ratios": [1.0, 1.0, 1.0]})
check("'below' targets need a ratio above 1.00, and 3 pairs are indicative",
      t["status"] == "MISS" and "indicative" in t["detail"], t)
t = targets._line("t", ours, theirs, "cpu_ms_per_req", 1.8, "le")
check("without pairs the verdict says it is on medians", t["status"] == "PASS" and "not paired" in t["detail"], t)
t = targets._line("t", cell("a", 0.01, {"seconds": 60, "converged": False}), cell("b", 0.02, {"seconds": 7,
                  "converged": True}), "cpu_ms_per_req", 1.8, "le", {"ratios": [2.0, 2.1, 2.2]})
check("the verdict names each side's warm-up and a cap", "warm-up a 60 s (cap, not converged), b 7 s" in t["detail"],
      t["detail"])
t = targets._line("t", cell("a", 0.01, {"seconds": 60, "converged": False, "cap_reason": "jit"}),
                  cell("b", 0.02, {"seconds": 7, "converged": True}), "cpu_ms_per_req", 1.8, "le")
check("... and a cap the JIT caused", "warm-up a 60 s (cap, JIT still compiling), b 7 s" in t["detail"], t["detail"])

# a cell whose reps fall, each below the one before, was measured cold
reps = lambda *v: [{"cpu_ms_per_req": x} for x in v]
check("reps 0.0275 -> 0.0177 -> 0.0149 are flagged as still warming",
      measure.still_warming(reps(0.0275, 0.0177, 0.0149)) == [0.0275, 0.0177, 0.0149])
check("steady, unordered or barely falling reps are not", not any(measure.still_warming(reps(*v)) for v in
      ((0.020, 0.019, 0.0195), (0.020, 0.019, 0.0185), (0.02, None, 0.01), (0.03, 0.01))))
t = targets._line("t", dict(cell("a", 0.015), still_warming=True), cell("b", 0.02), "cpu_ms_per_req", 1.0, "le")
check("the verdict names a side measured while still warming", "reps of a fall monotonically" in t["detail"],
      t["detail"])

# warm-up and pairs against a fake load generator
o = bench.parse(["--full", "--seed", "7"])
feed = []


def one(h, mode, size, seconds, opts, work, suite):
    v = feed.pop(0) if feed else h.cpu
    v, jit = v if isinstance(v, tuple) else (v, None)  # (CPU/request, JIT compiler share)
    return {"cpu_ms_per_req": v, "jit_share": jit, "req_per_s": 1000.0, "errors": 0,
            "others_on_server_cpu": 0.0}, "cmd"


measure.one = one
alive = types.SimpleNamespace(alive=lambda: True)


class handle:  # hashable, as the runner's server handles are
    def __init__(self, name, cpu):
        self.variant, self.proc, self.cpu = types.SimpleNamespace(name=name, jdk="17"), alive, cpu


g = types.SimpleNamespace(suite=types.SimpleNamespace(key="t13-aes128"))
h = handle("tomcat-sunjsse", 0.02)
feed[:] = [0.06, 0.032, 0.021, 0.0204, 0.0201, 0.5]
w = bench.converge(h, g, "keepalive", 1024, o, "/tmp")
check("warm-up stops at the first three windows within 5%", w["converged"] and len(w["windows"]) == 5, w)
feed[:] = [0.01 * (1 + (i % 2)) for i in range(200)]
w = bench.converge(h, g, "keepalive", 1024, o, "/tmp")
check("a warm-up that never settles stops at its cap, marked", not w["converged"] and w["seconds"] == o.warmup, w)
check("... its cap reason is the CPU per request", w.get("cap_reason") == "cpu", w)
# the JIT: a window whose compiler threads took more than rules.WARM_JIT_MAX
# of the process's CPU does not count, however well its CPU/request agrees
check("a window with the JIT at 22% does not count toward agreement",
      not rules.agreed([0.30, 0.30, 0.30], [0.0, 0.0, 0.22]) and rules.agreed([0.30, 0.30, 0.30], [0.0, 0.01, 0.02])
      and rules.agreed([0.30, 0.30, 0.30]) and rules.agreed([0.30, 0.30, 0.30], [None] * 3))
import procs  # noqa: E402
check("the compiler threads' CPU of a window: a thread started meanwhile counts whole, one that ended is dropped",
      abs(procs.jit_seconds({11: 2.0, 12: 1.0}, {11: 2.5, 13: 0.3}) - 0.8) < 1e-9
      and procs.jit_threads([2 ** 22 + 7]) == {})
import perfprofile  # noqa: E402
import report_cpu  # noqa: E402
seen = report_cpu.jit_seen(["a", "b"], [{"ok": True, "jit_share": 0.22}, {"ok": True, "jit_share": 0.01}])
check("a profile taken while the JIT compiled says so (header and report)",
      "STILL COMPILING" in perfprofile.jit_note(0.22) and "STILL" not in perfprofile.jit_note(0.01)
      and "a 22.0% (**still compiling**)" in seen and "b 1.0%" in seen and "b 1.0% (" not in seen, seen)
import socket  # noqa: E402
import threading  # noqa: E402
import verify  # noqa: E402
_srv = socket.socket()
_srv.bind(("127.0.0.1", 0))
_srv.listen(1)


def _close_without_answer():
    c, _ = _srv.accept()
    c.recv(100)
    c.close()


threading.Thread(target=_close_without_answer, daemon=True).start()
try:
    _got = verify.fetch_https_json(_srv.getsockname()[1], "/_stats", tls=False)
except Exception as e:  # noqa: BLE001 (an IndexError here ended a whole full run)
    _got = e
check("a server that closes without an HTTP answer to /_stats fails that cell (ValueError), not the run",
      isinstance(_got, ValueError) and "no HTTP answer" in str(_got), repr(_got))
_srv.close()
_deleted = perfprofile._SAMPLE.match("nioEventLoopGro  1123/1130  7f3a2b1c0d10 aes_gcm_enc_update "
                                     "(/tmp/libnetty_tcnative_linux_x86_64618.so (deleted))")
_plain = perfprofile._SAMPLE.match("java  1093/1101  7f3a2b1c0d10 void Foo.bar(int) (/opt/x/libtlsbridge-bundled.so)")
check("a sample in a library deleted after loading (netty-tcnative, Conscrypt, ACCP) is read and counted as the "
      "peer's TLS library",
      _deleted is not None and _deleted.group(6) == "/tmp/libnetty_tcnative_linux_x86_64618.so"
      and perfprofile.bucket("libnetty_tcnative_linux_x86_64618.so") == "peer's TLS library"
      and _plain is not None and _plain.group(5) == "void Foo.bar(int)"
      and perfprofile.bucket(os.path.basename(_plain.group(6))) == "libtlsbridge",
      (_deleted and _deleted.groups(), _plain and _plain.groups()))
feed[:] = [(0.33, 0.25), (0.31, 0.20), (0.30, 0.15), (0.30, 0.08), (0.30, 0.03), (0.296, 0.01), (0.30, 0.005),
           (0.298, 0.0), (0.9, 0.0)]
w = bench.converge(h, g, "newconn", 1024, o, "/tmp")
check("a warm-up whose CPU/request agrees while C2 compiles converges only once three windows have a quiet JIT",
      w["converged"] and len(w["windows"]) == 8 and w["jit_share"][-1] == 0.0, w)
feed[:] = [(0.30, 0.05)] * 200
w = bench.converge(h, g, "newconn", 1024, o, "/tmp")
check("a JIT that never quiets stops a handshake cell's warm-up at its own cap (twice keep-alive's), marked "
      "as the JIT's",
      not w["converged"] and w["seconds"] == o.warmup_handshake == 2 * o.warmup and w.get("cap_reason") == "jit"
      and report.warm_cell(w) == f"**{o.warmup_handshake:.0f} s cap (JIT)**", w)
check("--quick caps handshake cells as its keep-alive cells",
      rules.warm_cap(bench.parse(["--quick"]), "newconn") == bench.parse(["--quick"]).warmup == 3.0)

orders = []
for _ in range(2):
    feed[:] = []
    hs = [handle("tomcat-tlsbridge-direct", 0.010), handle("tomcat-sunjsse", 0.019)]
    res = {"cells": [cell("tomcat-tlsbridge-direct", 0.010), cell("tomcat-sunjsse", 0.019)]}
    bench.run_pairs(res, {x: c for x, c in zip(hs, res["cells"])}, g, "keepalive", 1024, o, "/tmp")
    e = res["pairs"][targets.item1_name("keepalive", 1024, "t13-aes128", "tomcat-tlsbridge-direct", "tomcat-sunjsse")]
    orders.append(e["orders"])
each = [sorted(w["variant"] for w in e["windows"] if w["pair"] == i + 1) for i in range(o.pairs)]
check(f"{o.pairs} pairs, each one window of either side", len(e["ratios"]) == o.pairs and all(
    x == ["tomcat-sunjsse", "tomcat-tlsbridge-direct"] for x in each), each)
check("the A/B orders repeat with the seed and are not all alike", orders[0] == orders[1] and len(set(orders[0])) == 2,
      orders)

# item-1 cells not planned as paired whose same-run medians miss get pairs
# after the fact, within the run's --repair-max budget (full 6, quick 0)
BIG = ("keepalive", 65536, "t13-aes128")
MISS64 = targets.item1_name(*BIG, "tomcat-tlsbridge", "tomcat-sunjsse")


def big_run():
    hs = [handle("tomcat-tlsbridge", 0.030), handle("tomcat-tlsbridge-direct", 0.015), handle("tomcat-sunjsse", 0.020)]
    cs = [dict(cell(x.variant.name, x.cpu), size=65536) for x in hs]
    return {"cells": cs}, dict(zip(hs, cs))


def repair_picks():
    res, _ = big_run()
    got = targets.repair_pairings(res, *BIG, 6)
    return [p[:3] for p in got] == [(MISS64, "tomcat-tlsbridge", "tomcat-sunjsse")] and \
        targets.repair_pairings(res, *BIG, 0) == [], got


trying("repair: a medians MISS outside the planned pairs is picked (0.030 vs 0.020), a PASS (0.015) is not; "
       "a budget of 0 picks none", repair_picks)


def repair_planned():
    cs = [cell("tomcat-tlsbridge-direct", 0.012), cell("tomcat-sunjsse", 0.011)]
    got = targets.repair_pairings({"cells": cs}, "keepalive", 1024, "t13-aes128", 6)
    return got == [], got


trying("repair: a miss the plan already pairs (keep-alive 1 KiB) is not paired twice", repair_planned)


def repair_run(argv, done=0):
    feed[:] = []
    res, cs = big_run()
    res["pairs"] = {f"x{i}": {"trigger": "medians MISS"} for i in range(done)}
    op = bench.parse(argv if "--quick" in argv else ["--full"] + argv)
    bench.run_pairs(res, cs, g, *BIG[:2], op, "/tmp")
    return res, op


def repair_full():
    res, op = repair_run(["--seed", "7"])
    e = res["pairs"].get(MISS64) or {}
    return (op.repair_max == 6 and e.get("trigger") == "medians MISS" and len(e["ratios"]) == op.pairs
            and list(res["pairs"]) == [MISS64]), {k: v for k, v in e.items() if k != "windows"}


def repair_none():
    quick, _ = repair_run(["--quick", "--seed", "7"])
    spent, _ = repair_run(["--seed", "7"], done=6)
    more, _ = repair_run(["--seed", "7", "--repair-max", "7"], done=6)
    return (MISS64 not in quick.get("pairs", {}) and MISS64 not in spent["pairs"]
            and MISS64 in more["pairs"]), [list(x.get("pairs", {}))[-1:] for x in (quick, spent, more)]


trying("repair: run_pairs pairs the medians MISS (7 pairs, trigger recorded in results.json)", repair_full)
trying("repair: none with --quick (budget 0) or once the run's budget is spent; --repair-max raises it",
       repair_none)


def repair_verdict():
    res, _ = big_run()
    res["pairs"] = {MISS64: {"ours": "tomcat-tlsbridge", "theirs": "tomcat-sunjsse", "trigger": "medians MISS",
                             "ratios": [1.05, 1.1, 1.02, 1.08, 1.04, 1.1, 1.06]}}
    ts = targets.evaluate(res)
    t = next(x for x in ts if x["target"] == MISS64)
    return (t["status"] == "PASS" and t.get("paired_after") == "medians MISS" and "over 7 alternating pairs" in
            t["detail"] and "paired after a medians MISS (medians alone: 1.50x)" in t["detail"]
            and "1 of them after a medians MISS" in ts[0]["detail"]), (t, ts[0]["detail"])


trying("repair: the verdict uses the pairs (PASS over 7 pairs where the medians said 0.67x) and says why they "
       "were taken", repair_verdict)

# cluster cells (bench/runner/cluster.py): ServerHellos as HAProxy logs them,
# from openssl s_server (TLS 1.3, AES-256-GCM, x25519): a full handshake and
# a resumed one (pre_shared_key extension, 0029)
import cluster  # noqa: E402
FULL_SH = ("020000760303ACFF0AD3E745BBC6B484A2C5724586398664F0C510DBD8C0D7D2D377586ABB4420A740B1CAF9997874166A7CDA2361"
           "24DB8D0F234495A775943562F9407A43671D130200002E002B0002030400330024001D0020C5098649FD4070229C8D93F545491695"
           "C58C08B027A294127D4DF769B52DBE64")
RESUMED_SH = ("0200007C0303EBC1F373F3E691C7FA492B4DC31B4A0721D5BAB439D81792D2AFD82EE9582E5A201D5536DE63BD10E618"
              "E9D953AD4E2D633C586C578580A34F08C966E162B605161302000034002B0002030400330024001D0020E114E3C5562606"
              "CF2912C96C68E066BA7BEB5C5313CC971816436651352C6647002900020000")
check("cluster: a full TLS 1.3 ServerHello is not resumed", cluster.server_hello(FULL_SH) ==
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", False), cluster.server_hello(FULL_SH))
check("cluster: a ServerHello with pre_shared_key is resumed", cluster.server_hello(RESUMED_SH)[3] is True)
w = cluster.parse_log([f"SH {FULL_SH} 1847 cD", f"SH {RESUMED_SH} 520 --", f"SH {RESUMED_SH} 520 --",
                       "SH - 0 CD", "[NOTICE] haproxy started"])
check("cluster: HAProxy's log -> 3 ServerHellos, 2 resumed, 1 connection without one",
      (w["hellos"], w["resumed"], w["no_hello"]) == (3, 2, 1), w)
t13 = types.SimpleNamespace(protocol="TLSv1.3", iana="TLS_AES_128_GCM_SHA256")
check("cluster: a ServerHello with another suite fails the cell's verification",
      not verify.judge(w["negotiated"], t13, "wire")["ok"])
check("cluster cells: on in a full run, off with --quick or --variants",
      [bench.parse(a).cluster for a in (["--full"], ["--quick"], [], ["--full", "--variants", "nginx"])]
      == ["on", "off", "off", "off"])
check("no argument is the quick run, --quick its synonym, --full the long one",
      [bench.parse(a).quick for a in ([], ["--quick"], ["--full"])] == [True, True, False])
only = bench.parse(["--cluster", "only"])
check("--cluster only: no JMH, instruction counts, probe or profiles",
      (only.jmh, only.icount, only.probe, only.profile) == ("off",) * 4)
# issue 16's targets on a made-up run
def mk(variant, cpu, mode="keepalive", size=1024, suite="t13-aes128", verified=True):
    return {"variant": variant, "mode": mode, "size": size, "suite_key": suite, "reps": [{}] * 3,
            "median": {"cpu_ms_per_req": cpu}, "verified": verified}


run = {"cells": [mk("tomcat-tlsbridge", 0.010), mk("tomcat-tlsbridge-direct", 0.012), mk("tomcat-sunjsse", 0.011),
                 mk("tomcat-tlsbridge-25", 0.010), mk("tomcat-sunjsse-25", 0.0105),
                 mk("tomcat-tlsbridge", 0.020, size=65536), mk("tomcat-sunjsse", 0.030, size=65536),
                 mk("tomcat-tlsbridge-direct", 0.020, size=65536),  # no JDK 25 pair at 64 KiB: no row
                 mk("tomcat-plain", 0.006), mk("nginx", 0.005), mk("nginx-plain", 0.002),
                 mk("tomcat-plain", 0.006, suite="plain"), mk("nginx-plain", 0.002, suite="plain"),
                 mk("tomcat-tlsbridge", 0.20, "newconn", suite="t13-aes128-ec"),
                 mk("nginx", 0.10, "newconn", suite="t13-aes128-ec"),
                 mk("tomcat-plain", 0.05, "newconn", suite="plain"), mk("nginx-plain", 0.02, "newconn", suite="plain"),
                 mk("bss-tlsbridge", 0.004), mk("bss-sunjsse", 0.008)],
       "pairs": {targets.item1_name("keepalive", 1024, "t13-aes128", "tomcat-tlsbridge-25", "tomcat-sunjsse-25"):
                 {"ours": "tomcat-tlsbridge-25", "theirs": "tomcat-sunjsse-25", "ratios": [1.1, 0.9, 1.05, 1.0, 0.95,
                                                                                          1.02, 1.08]}},
       "syscalls": {"ok": True, "n": 200, "per_request": {
           "tlsbridge": {"keep-alive": {"read": 2.0, "write": 1.0, "poll": 1.0, "(excluded JVM threads)": 9},
                         "new connection": {"read": 30.0}},
           "sunjsse": {"keep-alive": {"read": 3.0}, "new connection": {"read": 40.0}}}},
       "jmh": {"ok": True, "results": []}}
ts = targets.evaluate(run)
byname = {t["target"]: t for t in ts}
one = {tuple(t["workload"]) + tuple(t["cells"][0][:1]): t for t in ts if t.get("item") == 1}
k = ("keepalive", 1024, "t13-aes128")
check("item 1: a row per measured comparison (4 at 1 KiB with bss, 2 at 64 KiB), none without both sides",
      len([t for t in ts if t.get("item") == 1]) == 6, [t["target"] for t in ts if t.get("item") == 1])
check("item 1: 0.010 vs 0.011 PASS on medians (not paired), 0.012 vs 0.011 MISS",
      one[k + ("tomcat-tlsbridge",)]["status"] == "PASS" and "not paired" in one[k + ("tomcat-tlsbridge",)]["detail"]
      and one[k + ("tomcat-tlsbridge-direct",)]["status"] == "MISS", [one[k + (v,)]["status"] for v in
                                                                      ("tomcat-tlsbridge", "tomcat-tlsbridge-direct")])
t = one[k + ("tomcat-tlsbridge-25",)]
check("item 1: pairs straddling 1.00 are NOISY with [min–max], planned as paired",
      t["status"] == "NOISY" and "0.98x [0.91–1.11]" in t["detail"] and t["planned_pairs"], t)
s1 = ts[0]
check("item 1 summary: counts per status, MISS when any cell misses",
      s1["status"] == "MISS" and "6 cells: 4 PASS, 1 NOISY, 1 MISS" in s1["detail"], s1)
check("item 1 pairs planned for keep-alive 1 KiB heap/direct/JDK 25 only",
      [p[1] for p in targets.planned_pairs("keepalive", 1024, "t13-aes128", {v["variant"] for v in run["cells"]})] ==
      ["tomcat-tlsbridge", "tomcat-tlsbridge-direct", "tomcat-tlsbridge-25", "bss-tlsbridge"]
      and not [p for p in targets.planned_pairs("keepalive", 65536, "t13-aes128", {"tomcat-tlsbridge", "tomcat-sunjsse"})],
      targets.planned_pairs("keepalive", 1024, "t13-aes128", {v["variant"] for v in run["cells"]}))
tax = {t["target"]: t for t in ts if t["target"].startswith("2.")}
ka = next(t for n, t in tax.items() if "keep-alive" in n)
check("item 2: keep-alive tax 0.004 vs 0.003 = 1.33x > 1.3: MISS, both taxes and floors printed",
      ka["status"] == "MISS" and "tax 0.0040" in ka["detail"] and "nginx-plain 0.0020" in ka["detail"]
      and "tomcat-plain 0.0060" in ka["detail"], ka)
ec = next(t for n, t in tax.items() if "TLS 1.3 ECDSA" in n)
check("item 2: handshake tax 0.15 vs 0.08 = 1.88x: MISS", ec["status"] == "MISS" and abs(ec["ratio"] - 0.15 / 0.08) < 1e-9,
      ec)
na = next(t for n, t in tax.items() if "TLS 1.2 RSA" in n)
check("item 2: a workload not measured is N/A naming the missing cells",
      na["status"] == "N/A" and "tomcat-tlsbridge" in na["detail"] and "nginx" in na["detail"], na)
ok = dict(run, cells=[dict(c, median={"cpu_ms_per_req": 0.0085}) if c["variant"] == "tomcat-tlsbridge" and
                      c["mode"] == "keepalive" and c["size"] == 1024 else c for c in run["cells"]])
ka = next(t for t in targets.evaluate(ok) if t["target"].startswith("2.") and "keep-alive" in t["target"])
check("item 2: keep-alive tax 0.0025 vs 0.003: PASS", ka["status"] == "PASS", ka)
neg = dict(run, cells=[dict(c, median={"cpu_ms_per_req": 0.0055}) if c["variant"] == "tomcat-tlsbridge" and
                       c["mode"] == "keepalive" and c["size"] == 1024 else c for c in run["cells"]])
ka = next(t for t in targets.evaluate(neg) if t["target"].startswith("2.") and "keep-alive" in t["target"])
check("item 2: a tax below its floor (noise) is NOISY, not a PASS", ka["status"] == "NOISY" and "noise" in ka["detail"],
      ka)
# item 2 on pairs of tomcat-tlsbridge and nginx windows: per pair, nginx's
# tax over tlsbridge's (floors: the plain group's medians, 0.05 and 0.02),
# need >= 1/1.25; the medians alone say 0.15 vs 0.08 = 1.88x MISS
EC = "2. TLS tax, Tomcat full handshake (new connection) TLS 1.3 ECDSA P-256: tlsbridge's <= 1.25x nginx's"


def ec_line(values):
    e = {"ours": "tomcat-tlsbridge", "theirs": "nginx", "values": values, "ratios": [b / a if a and b else None for a, b in values]}
    return next(t for t in targets.evaluate(dict(run, pairs=dict(run["pairs"], **{EC: e}))) if t["target"] == EC)


def tax_paired_pass():
    t = ec_line([[0.15, 0.105], [0.16, 0.11], [0.15, 0.11], [0.14, 0.10], [0.15, 0.11], [0.155, 0.11],
                 [0.145, 0.105]])
    return (t["status"] == "PASS" and "1.88x on the medians (target <= 1.25x)" in t["detail"]
            and "judged on pairs: 1.12x [1.11–1.22] over 7 alternating pairs" in t["detail"]
            and "minus its server's plain-HTTP median" in t["detail"]), t


def tax_paired_noisy():
    t = ec_line([[0.15, 0.105], [0.20, 0.10], [0.15, 0.11], [0.20, 0.10], [0.15, 0.11], [0.20, 0.10], [0.21, 0.10]])
    return (t["status"] == "NOISY" and "[1.11–2.00]" in t["detail"] and t["median_status"] == "MISS"
            and "median alone: MISS" in t["detail"] and targets.missed(t)), t


def tax_paired_nonpositive():
    # tlsbridge's window at or below its floor: no ratio for that pair;
    # nginx's below its floor: a ratio <= 0, a miss
    t = ec_line([[0.04, 0.10], [0.05, 0.10], [0.15, 0.01], [0.15, 0.11], [0.15, 0.11], [None, 0.1], [0.15, 0.11]])
    none = ec_line([[0.04, 0.10], [0.05, 0.10], [0.03, 0.11]])
    return (t["status"] == "NOISY" and t["pairs"] == 4 and "3 of 7 pairs N/A" in t["detail"]
            and none["status"] == "MISS" and "none of the 3 pairs gave a tax ratio" in none["detail"]
            and "judged on medians" in none["detail"]), (t, none)


trying("item 2: a tax judged on 7 pairs: PASS where the medians said 1.88x, median [min–max], floors named",
       tax_paired_pass)
trying("item 2: tax pairs straddling 1/1.25 are NOISY (median alone MISS: profiled)", tax_paired_noisy)
trying("item 2: a pair whose tlsbridge window is not above its floor is N/A (no crash); none left: medians",
       tax_paired_nonpositive)


NC = ("newconn", 1024)


def tax_run(argv, suite="t13-aes128-ec", floors=True):
    feed[:] = []
    hs = [handle("tomcat-tlsbridge", 0.14), handle("nginx", 0.10)]
    cs = [dict(cell(x.variant.name, x.cpu), mode="newconn", suite_key=suite) for x in hs]
    fl = [dict(cell(v, x), mode="newconn", suite_key="plain") for v, x in (("tomcat-plain", 0.05),
                                                                          ("nginx-plain", 0.02))]
    res = {"cells": cs + (fl if floors else [])}
    op = bench.parse(argv if "--quick" in argv else ["--full"] + argv)
    bench.run_pairs(res, dict(zip(hs, cs)), types.SimpleNamespace(suite=types.SimpleNamespace(key=suite)), *NC, op,
                    "/tmp")
    return res, op


def tax_pairs_run():
    res, op = tax_run(["--seed", "7"])
    e = res.get("pairs", {}).get(EC) or {}
    t = next(x for x in targets.evaluate(res) if x["target"] == EC)
    return (e.get("values") == [[0.14, 0.10]] * op.pairs and len(e["orders"]) == op.pairs
            and t["status"] == "PASS" and t["pairs"] == op.pairs), (e, t)


def tax_pairs_when():
    off, _ = tax_run(["--tax-pairs", "off"])
    quick_ec, _ = tax_run(["--quick"])
    quick, _ = tax_run(["--quick"], suite="t13-aes128")
    nofloor, _ = tax_run([], floors=False)
    name = EC.replace("ECDSA P-256", "RSA-2048")
    got = [list(x.get("pairs", {})) for x in (off, quick_ec, quick, nofloor)]
    return got == [[], [], [name], []], got


trying("item 2: run_pairs pairs tomcat-tlsbridge and nginx windows of a handshake tax, the verdict reads them",
       tax_pairs_run)
trying("item 2: no tax pairs with --tax-pairs off, without the floors, or (--quick) off the primary suite",
       tax_pairs_when)
sc = [t for t in ts if t["target"].startswith("3. Native socket")]
check("item 3: 4.0 syscalls per keep-alive request MISS (excluded JVM threads not counted); 30 vs 40 per new "
      "connection PASS", [t["status"] for t in sc] == ["MISS", "PASS"], sc)
check("item 3: syscalls not counted are N/A", all(t["status"] == "N/A" for t in targets.evaluate(
    dict(run, syscalls=None)) if t["target"].startswith("3. Native socket")))
bss = next(t for t in ts if t["target"].startswith("3. BenchmarkSSLSocket new"))
check("item 3: bss new connection not measured: N/A", bss["status"] == "N/A", bss)
bka = next(t for t in ts if t["target"].startswith("3. BenchmarkSSLSocket keep-alive"))
check("item 3: bss keep-alive 0.004 vs nginx 0.005: PASS", bka["status"] == "PASS", bka)
import jmh  # noqa: E402
import plan as plan_mod  # noqa: E402
jr = {"ok": True, "results": [{"benchmark": "x.wrapUnwrap", "params": {"size": "1024", "buffers": b, "provider": p},
                               "score": s} for b, p, s in (("heap", "TLSBridge", 160), ("heap", "SunJSSE", 100),
                                                           ("direct", "TLSBridge", 140), ("direct", "SunJSSE", 100))]}
if jmh.ratio(jr, "wrapUnwrap", {"size": "1024", "buffers": "heap"})[0] is None:
    check("JMH results shape understood by jmh.ratio", False, "jmh.ratio found nothing")
else:
    j4 = [t for t in targets.evaluate(dict(run, jmh=jr)) if t["target"].startswith("4.")]
    check("item 4: JMH 1.6x PASS (stretch 2x not reached), 1.4x MISS",
          [t["status"] for t in j4] == ["PASS", "MISS"] and "stretch <= 0.50x: not reached" in j4[0]["detail"], j4)
# iteration pairs: 7 ratios all >= 1.5 PASS; straddling NOISY (scores alone
# would pass); all below MISS; the spread is printed
def jraw(heap_a, heap_b):
    rows = []
    for b, p, raw in (("heap", "TLSBridge", heap_a), ("heap", "SunJSSE", heap_b),
                      ("direct", "TLSBridge", [150] * 7), ("direct", "SunJSSE", [100] * 7)):
        rows.append({"benchmark": "x.wrapUnwrap", "params": {"size": "1024", "buffers": b, "provider": p},
                     "score": sum(raw) / len(raw), "raw": [raw]})
    return {"ok": True, "results": rows}


def j4of(jr):
    return [t for t in targets.evaluate(dict(run, jmh=jr)) if t["target"].startswith("4.")]


jp = j4of(jraw([160, 170, 155, 165, 160, 158, 162], [100] * 7))
check("item 4: 7 iteration pairs all >= 1.5x: PASS, [min-max] printed",
      [t["status"] for t in jp] == ["PASS", "PASS"] and "[0.59–0.65 over 7 iteration pairs]" in jp[0]["detail"], jp)
jn = j4of(jraw([160, 170, 140, 165, 160, 130, 162], [100] * 7))
check("item 4: iteration pairs straddling 1.5x: NOISY (scores alone PASS)",
      jn[0]["status"] == "NOISY" and jn[0]["median_status"] == "PASS" and "scores alone: PASS" in jn[0]["detail"]
      and targets.missed(jn[0]) is False, jn)
jm = j4of(jraw([120, 130, 125, 140, 120, 110, 120], [100] * 7))
check("item 4: iteration pairs all below 1.5x: MISS, profiled", jm[0]["status"] == "MISS" and targets.missed(jm[0]), jm)
jf = j4of(jraw([160, 170, 155, 165], [100] * 4))
check("item 4: fewer than 7 iteration pairs say so", "only 4 iteration pairs" in jf[0]["detail"], jf)
check("JMH profiles: own budget of 4 in a full run, none in --quick",
      plan_mod.jmh_profiles(bench.parse(["--full"])) == 4 and plan_mod.jmh_profiles(bench.parse(["--quick"])) == 0)
check("no old target left (1/1.8, FFM, 4x handshakes)", not [t for t in ts if "1.8" in t["target"] or "FFM" in
                                                            t["target"] or "4x" in t["target"]])

# the full run measures every workload the targets need, on both sides
import plan  # noqa: E402
import variants  # noqa: E402
full = plan.build(bench.parse(["--full"]))
byname = {v.name: v for v in variants.default(variants.all_variants(), False)}


def measured(name, mode, size, suite):
    return any(g.suite.key == suite and (mode, size) in g.cells and variants.serves(byname[name], mode, size, g)
               for g in full)


need = [(v, m, n, s) for _, m, n, s, _ in targets.TAX for v in (targets.TAX_OURS, targets.TAX_THEIRS)]
need += [(targets.FLOOR[v], m, n, "plain") for _, m, n, _, _ in targets.TAX for v in (targets.TAX_OURS,
                                                                                        targets.TAX_THEIRS)]
need += [(t[i], *t[3:6]) for t in targets.CELL_TARGETS for i in (1, 2)]
need += [(v, m, n, s) for m, n, s in targets.ITEM1_PAIRED for p in targets.ITEM1 for v in p
         if p[0] in targets.ITEM1_PAIRED_VARIANTS]
check("plan.FULL measures every cell items 1-3 name (taxes with both floors, native sockets, paired item-1 cells)",
      not [x for x in need if not measured(*x)], [x for x in need if not measured(*x)])
check("the floors run first (a missed tax is profiled while its servers run)", not full[0].tls, full[0])


def repair_estimate():
    got = []
    for argv in (["--full"], ["--quick"]):
        op, parts = bench.parse(argv), {}
        plan.estimate_seconds(plan.build(op), variants.default(variants.all_variants(), op.quick), op, parts)
        got.append(parts.get("pairs after a medians MISS (at most)"))
    # 6 comparisons x 7 pairs x 2 windows of 2 s, new-connection ones (siege's set-up) the dearest
    return got == [6 * 7 * 2 * (2 + rules.COST["siege"]), None], got


def tax_estimate():
    got = []
    for argv in (["--full"], ["--quick"]):
        pp = []
        for t in ("all" if argv == ["--full"] else "primary", "off"):
            op, parts = bench.parse(argv + ["--tax-pairs", t]), {}
            plan.estimate_seconds(plan.build(op), variants.default(variants.all_variants(), op.quick), op, parts)
            pp.append(sum(v for k, v in parts.items() if k.startswith("pairs ")))
        got.append(round(pp[0] - pp[1], 1))
    # full: 4 handshake taxes x 7 pairs x 2 windows of 2 s + siege's set-up,
    # and the keep-alive tax's with wrk's; quick: its primary suite's two, 3 pairs of 1 s
    want = [round(4 * 7 * 2 * (2 + rules.COST["siege"]) + 7 * 2 * (2 + rules.COST["wrk"]), 1),
            round(3 * 2 * (1 + rules.COST["siege"]) + 3 * 2 * (1 + rules.COST["wrk"]), 1)]
    return got == want, (got, want)


trying("the estimate counts the tax pairs (full: 5 taxes, quick: the primary suite's 2)", tax_estimate)
trying("the estimate reserves the repair budget's worst case (full: 6 new-connection pairings), quick none",
       repair_estimate)


def miss_past_cap():
    """With the profile cap spent, a MISS's cells are still profiled; a
    NOISY target's are not (perf itself stubbed out)."""
    taken = []
    saved = (bench.perfprof.record, report.targets, dict(bench.PHASES))
    bench.perfprof.record = lambda perf, h, java, sec, drive, d, tag: (taken.append(h.variant.name) or
                                                                       {"ok": False, "error": "stub"})
    here = ("newconn", 1024, "t12-ec-aes128")
    report.targets = lambda results: [{"status": "MISS", "cells": [("tomcat-tlsbridge",) + here]},
                                      {"status": "NOISY", "median_status": "MISS", "cells": [("bss-tlsbridge",) + here]}]
    bench.PHASES["perf profile one"] = (0.0, 20)
    try:
        class Handle:  # what profile_cell reads of a server handle
            def __init__(self, name):
                self.variant = types.SimpleNamespace(name=name, jdk=None)
                self.proc = types.SimpleNamespace(alive=lambda: True)
        hs = [Handle("tomcat-tlsbridge"), Handle("bss-tlsbridge")]
        cells = {h: {"reps": [{}]} for h in hs}
        bench.profile_cell({}, cells, types.SimpleNamespace(perf="perf", java={}),
                           types.SimpleNamespace(suite=types.SimpleNamespace(key=here[2])), here[0], here[1],
                           types.SimpleNamespace(profile="miss", profile_max=20, profile_seconds=1), "/nonexistent")
        skipped = cells[hs[1]].get("profile", {}).get("error", "")
    finally:
        bench.perfprof.record, report.targets = saved[0], saved[1]
        bench.PHASES.clear()
        bench.PHASES.update(saved[2])
    return taken == ["tomcat-tlsbridge"] and skipped.startswith("not taken"), (taken, skipped)


trying("a MISS's cells are profiled past --profile-max, a NOISY target's are not", miss_past_cap)
# what users pick instead: each peer judged like SunJSSE, in every cell both
# serve, one summary line per peer (N/A with its reason when it did not run)
def peer_run():
    cells = [mk("tomcat-tlsbridge", 0.010), mk("tomcat-conscrypt", 0.012), mk("tomcat-sunjsse-accp", 0.0095),
             mk("tomcat-tlsbridge", 0.30, "newconn"), mk("tomcat-conscrypt", 0.90, "newconn"),
             mk("tomcat-sunjsse-accp", 0.50, "newconn")]
    ka = targets.peer_name("keepalive", 1024, "t13-aes128", "tomcat-tlsbridge", "tomcat-sunjsse-accp")
    pairs = {ka: {"ours": "tomcat-tlsbridge", "theirs": "tomcat-sunjsse-accp",
                  "ratios": [0.95, 0.97, 0.93, 0.96, 0.98, 0.94, 0.99]}}
    variants_ = {v: {"available": True} for v in ("tomcat-tlsbridge", "tomcat-conscrypt", "tomcat-sunjsse-accp")}
    variants_["tomcat-sunjsse-accp"] = {"available": True}
    return {"cells": cells, "pairs": pairs, "variants": variants_}


def peer_verdicts():
    ts = targets.evaluate(peer_run())
    rows = {(t["peer"], t["workload"][0]): t for t in ts if t.get("item") == "peer"}
    summ = {t["peer"]: t for t in ts if t.get("summary_of") == "peer"}
    acc, con = rows[("tomcat-sunjsse-accp", "keepalive")], rows[("tomcat-conscrypt", "keepalive")]
    ok = (acc["status"] == "MISS" and "1.04x [1.01–1.08] over 7 alternating pairs" in acc["detail"]
          and acc["planned_pairs"] and con["status"] == "PASS" and "not paired" in con["detail"]
          and rows[("tomcat-sunjsse-accp", "newconn")]["status"] == "PASS"
          and summ["tomcat-sunjsse-accp"]["status"] == "MISS" and summ["tomcat-conscrypt"]["status"] == "PASS"
          and "2 cells: 2 PASS, 0 NOISY, 0 MISS" in summ["tomcat-conscrypt"]["detail"]
          and not [t for t in ts if t.get("item") == 1])
    return ok, ([(k, t["status"], t["detail"][:90]) for k, t in rows.items()],
                {k: (t["status"], t["detail"][:120]) for k, t in summ.items()})


trying("peers: tlsbridge over SunJSSE+ACCP 1.04x on 7 pairs is a MISS, 0.83x over Conscrypt on medians a PASS; one "
       "summary per peer", peer_verdicts)


def peer_not_in_run():
    r = dict(peer_run(), variants={"tomcat-tlsbridge": {"available": True},
                                   "tomcat-conscrypt": {"available": False, "reason": "no Conscrypt here"}})
    r["cells"] = [c for c in r["cells"] if c["variant"] not in ("tomcat-conscrypt", "tomcat-sunjsse-accp")]
    ts = {t["peer"]: t for t in targets.evaluate(r) if t.get("summary_of") == "peer"}
    return (ts["tomcat-conscrypt"]["status"] == "N/A" and "no Conscrypt here" in ts["tomcat-conscrypt"]["detail"]
            and ts["tomcat-sunjsse-accp"]["status"] == "N/A" and "not in it" in ts["tomcat-sunjsse-accp"]["detail"]), ts


trying("peers: a peer that did not run is N/A with the reason (not available here, or not asked for)",
       peer_not_in_run)


def peer_planned():
    names = {"tomcat-tlsbridge", "tomcat-sunjsse", "tomcat-conscrypt", "tomcat-sunjsse-accp", "netty-tlsbridge",
             "netty-openssl", "netty-jdk"}
    ka = [p[1:3] for p in targets.planned_pairs("keepalive", 1024, "t13-aes128", names)]
    nc = [p[1:3] for p in targets.planned_pairs("newconn", 1024, "t13-aes128", names)]
    want = [("tomcat-tlsbridge", "tomcat-sunjsse"), ("tomcat-tlsbridge", "tomcat-conscrypt"),
            ("tomcat-tlsbridge", "tomcat-sunjsse-accp"), ("netty-tlsbridge", "netty-openssl")]
    return ka == want and nc == [], (ka, nc)


trying("peers: paired where SunJSSE is (keep-alive 1 KiB and 16 KiB), Netty's pair too; new connection on medians",
       peer_planned)


def peer_repair():
    r = {"cells": [mk("tomcat-tlsbridge", 0.50, "newconn"), mk("tomcat-conscrypt", 0.40, "newconn"),
                   mk("tomcat-sunjsse", 0.60, "newconn")]}
    got = targets.repair_pairings(r, "newconn", 1024, "t13-aes128", 6)
    return [p[1:3] for p in got] == [("tomcat-tlsbridge", "tomcat-conscrypt")], got


trying("peers: a peer cell whose medians miss is paired after the fact, within the run's budget", peer_repair)


def peer_pairs_run():
    feed[:] = []
    hs = [handle("tomcat-tlsbridge", 0.010), handle("tomcat-sunjsse", 0.011), handle("tomcat-conscrypt", 0.012),
          handle("tomcat-sunjsse-accp", 0.0095)]
    res = {"cells": [cell(x.variant.name, x.cpu) for x in hs]}
    op = bench.parse(["--quick", "--seed", "7"])
    bench.run_pairs(res, dict(zip(hs, res["cells"])), g, "keepalive", 1024, op, "/tmp")
    got = sorted(e["theirs"] for e in res.get("pairs", {}).values())
    return got == ["tomcat-conscrypt", "tomcat-sunjsse", "tomcat-sunjsse-accp"] and all(
        len(e["ratios"]) == op.pairs for e in res["pairs"].values()), got


trying("peers: the quick run pairs tomcat-tlsbridge with Conscrypt and ACCP on keep-alive 1 KiB (3 pairs each)",
       peer_pairs_run)
need = [(v, m, n, "t13-aes128") for a, b, _ in targets.PEER for v in (a, b)
        for m, n in (("keepalive", 1024), ("keepalive", 16384), ("keepalive", 65536), ("newconn", 1024),
                     ("resumed", 1024))]
check("plan.FULL measures every peer and its tlsbridge counterpart on the primary suite (keep-alive 1-64 KiB, new "
      "and resumed connections)", not [x for x in need if not measured(*x)], [x for x in need if not measured(*x)])
quick = plan.build(bench.parse(["--quick"]))
qv = {v.name: v for v in variants.default(variants.all_variants(), True)}
qhave = {(v, m) for v in qv for gq in quick if gq.tls for m, n in gq.cells
         if gq.suite.key == "t13-aes128" and variants.serves(qv[v], m, n, gq)}
check("the quick run measures Conscrypt and ACCP (keep-alive and new connection) and no Netty server",
      all((v, m) in qhave for v in ("tomcat-conscrypt", "tomcat-sunjsse-accp") for m in ("keepalive", "newconn"))
      and not [v for v in qv if v.startswith("netty-")], sorted(qhave))
check("Netty's JDK mode on tlsbridge is also held to SunJSSE in Netty (medians, repaired on a miss)",
      ("netty-tlsbridge", "netty-jdk") in targets.ITEM1 and "netty-tlsbridge" not in targets.ITEM1_PAIRED_VARIANTS)
# the full run: every Netty server and wildfly-openssl in the peers' cells
# (keep-alive 1, 16 and 64 KiB, new and resumed connections, primary suite)
fv = {v.name: v for v in variants.default(variants.all_variants(), False)}
fhave = {(v, m, n) for v in fv for gf in full if gf.tls for m, n in gf.cells
         if gf.suite.key == "t13-aes128" and variants.serves(fv[v], m, n, gf)}
fwant = {(v, m, n) for v in ("netty-openssl", "netty-tlsbridge", "netty-jdk", "tomcat-wildfly-openssl")
         for m, n in (("keepalive", 1024), ("keepalive", 16384), ("keepalive", 65536), ("newconn", 1024),
                      ("resumed", 1024))}
check("the full run measures the Netty servers and wildfly-openssl in the peers' cells",
      fwant <= fhave, sorted(fwant - fhave))
# new connections with an ECDSA P-256 key: every peer but the ones that
# cannot (wildfly-openssl has no ECDSA certificate to send) beside its
# tlsbridge counterpart, in the full run; the quick run has no such group
ec_need = [(v, "newconn", 1024, "t13-aes128-ec") for a, b, _ in targets.PEER for v in (a, b)
           if b not in variants.PEER_NO_EC]
ec_not = [(v, "newconn", 1024, "t13-aes128-ec") for v in variants.PEER_NO_EC]
check("the full run measures each peer's new connections with ECDSA P-256 beside tlsbridge's; none of the peers "
      "that cannot serve it", not [x for x in ec_need if not measured(*x)] and not [x for x in ec_not if measured(*x)]
      and "tomcat-wildfly-openssl" in variants.PEER_NO_EC, ([x for x in ec_need if not measured(*x)],
                                                           [x for x in ec_not if measured(*x)]))
check("the quick run is as it was: no ECDSA group, so no peer's ECDSA cell",
      not [gq for gq in quick if gq.suite.key == "t13-aes128-ec"], quick)
narrow = plan.build(bench.parse(["--variants", "tomcat-tlsbridge,tomcat-conscrypt", "--modes", "newconn",
                                 "--suites", "t13-aes128-ec"]))
check("a narrowed run naming the ECDSA suite measures Conscrypt there",
      any(variants.serves(fv["tomcat-conscrypt"], m, n, gn) for gn in narrow if gn.tls for m, n in gn.cells), narrow)


def peer_no_ec_said():
    r = peer_run()
    r["cells"] = r["cells"] + [dict(c, variant="tomcat-wildfly-openssl") for c in r["cells"]
                               if c["variant"] == "tomcat-conscrypt"]
    said = "no new connection with an ECDSA P-256 key: wildfly-openssl 2.2.5 takes only RSA"
    t = next(t for t in targets.evaluate(r) if t.get("summary_of") == "peer" and t["peer"] == "tomcat-wildfly-openssl")
    # a run with no cell of it (an ECDSA-only run, say) says it too
    n = next(t for t in targets.evaluate(peer_run()) if t.get("summary_of") == "peer"
             and t["peer"] == "tomcat-wildfly-openssl")
    return said in t["detail"] and t["status"] != "N/A" and said in n["detail"] and n["status"] == "N/A", (t, n)


trying("wildfly-openssl's verdict says why it has no ECDSA cell", peer_no_ec_said)


# the engine benchmark: the peers' engines beside tlsbridge's and SunJSSE's in
# the full run (1 KiB, heap and direct, both keys where served), none in --quick
def jmh_plans():
    fullp, quickp = jmh.plans(False), jmh.plans(True)
    peers = {p: pl for pl in fullp[1:] for p in pl["provider"]}
    ok = (quickp == [{"provider": ["TLSBridge", "SunJSSE"], "size": ["1024"], "buffers": ["heap"], "key": ["rsa"]}]
          and fullp[0]["provider"] == ["TLSBridge", "SunJSSE"] and set(peers) == set(jmh.PEERS)
          and all(pl["size"] == ["1024"] and pl["buffers"] == ["heap", "direct"] for pl in peers.values())
          and peers["wildfly-openssl"]["key"] == ["rsa"] and peers["Conscrypt"]["key"] == ["rsa", "ec"]
          and jmh.parameter_sets(True) == 4 and jmh.parameter_sets(False) == 16 + 8 + 7
          and jmh.selectors(quickp[0]) == ["-p", "provider=TLSBridge,SunJSSE", "-p", "size=1024", "-p",
                                           "buffers=heap", "-p", "key=rsa", "WrapUnwrapBench", "HandshakeBench"])
    return ok, (quickp, fullp, jmh.parameter_sets(False))


trying("JMH: the quick run keeps tlsbridge and SunJSSE alone (4 sets); the full run adds each peer at 1 KiB (31 sets)",
       jmh_plans)


def jmh_estimate():
    got = []
    for argv in (["--full"], ["--quick"]):
        op, parts = bench.parse(argv), {}
        plan.estimate_seconds(plan.build(op), variants.default(variants.all_variants(), op.quick), op, parts)
        got.append(round(parts.get("JMH", 0), 1))
    return got == [round(31 * rules.COST["jmh_set_full"], 1), round(4 * rules.COST["jmh_set_quick"], 1)], got


trying("the estimate counts JMH's parameter sets (full 31, quick 4: its 25 s as before)", jmh_estimate)
LOG = """# Benchmark: org.tlsbridge.bench.jmh.HandshakeBench.handshake
# Parameters: (key = ec, provider = Conscrypt)
# Warmup Iteration   1: BENCH-ENGINE Conscrypt client org.conscrypt.Java8EngineWrapper Conscrypt 2.5.2
BENCH-ENGINE Conscrypt server org.conscrypt.Java8EngineWrapper Conscrypt 2.5.2
Iteration   1: 340 ops/s
# Benchmark: org.tlsbridge.bench.jmh.WrapUnwrapBench.wrapUnwrap
# Parameters: (buffers = heap, provider = Netty-OpenSSL, size = 1024)
# Warmup Iteration   1: <failure>

java.lang.IllegalStateException: Netty-OpenSSL handed out a x.Y client engine, not io.netty.handler.ssl.OpenSslEngine
	at org.tlsbridge.bench.jmh.Engines.verify(Engines.java:1)
"""


def jmh_log():
    engines, failed = jmh.read_log(LOG)
    return (engines.get("Conscrypt") == {"client": "org.conscrypt.Java8EngineWrapper",
                                         "server": "org.conscrypt.Java8EngineWrapper", "library": "Conscrypt 2.5.2"}
            and failed == [{"benchmark": "WrapUnwrapBench.wrapUnwrap",
                            "params": {"buffers": "heap", "provider": "Netty-OpenSSL", "size": "1024"},
                            "error": "java.lang.IllegalStateException: Netty-OpenSSL handed out a x.Y client engine, "
                                     "not io.netty.handler.ssl.OpenSslEngine"}]), (engines, failed)


trying("JMH's log gives each engine's class as its setup checked it, and each failed setup with its reason", jmh_log)
# the runner's check of a Netty server's own account of its engine
nv = {v.name: v for v in variants.all_variants() if v.name.startswith("netty-")}
said = {"netty-openssl": {"provider": "netty-tcnative", "engine": "io.netty.handler.ssl.OpenSslEngine",
                          "library": "BoringSSL"},
        "netty-tlsbridge": {"provider": "TLSBridge", "engine": "org.tlsbridge.engine.TlsBridgeEngine"},
        "netty-jdk": {"provider": "SunJSSE", "engine": "sun.security.ssl.SSLEngineImpl"}}
check("each Netty server is taken for the engine it names, and for no other's",
      sorted(nv) == sorted(said) and all(nv[a].wrong_engine(said[b]) is None if a == b else nv[a].wrong_engine(said[b])
                                         for a in said for b in said)
      and nv["netty-openssl"].wrong_engine(dict(said["netty-openssl"], library="OpenSSL 3.0.13"))
      and nv["netty-jdk"].wrong_engine(None), sorted(nv))
finish("VERDICTS")
