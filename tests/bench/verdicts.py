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
import targets  # noqa: E402
import verify  # noqa: E402

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} {name}{(': ' + str(detail)) if detail and not ok else ''}")
    passed, failed = passed + bool(ok), failed + (not ok)


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
      "ratio 1.90x [1.70–2.00] over 7 alternating pairs" in t["detail"] and t["median_status"] == "PASS"
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

# warm-up and pairs against a fake load generator
o = bench.parse(["--seed", "7"])
feed = []


def one(h, mode, size, seconds, opts, work, suite):
    v = feed.pop(0) if feed else h.cpu
    return {"cpu_ms_per_req": v, "req_per_s": 1000.0, "errors": 0, "others_on_server_cpu": 0.0}, "cmd"


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

orders = []
for _ in range(2):
    feed[:] = []
    hs = [handle("tomcat-tlsbridge-direct", 0.010), handle("tomcat-sunjsse", 0.019)]
    res = {"cells": [cell("tomcat-tlsbridge-direct", 0.010), cell("tomcat-sunjsse", 0.019)]}
    bench.run_pairs(res, {x: c for x, c in zip(hs, res["cells"])}, g, "keepalive", 1024, o, "/tmp")
    e = res["pairs"][targets.CELL_TARGETS[0][0]]
    orders.append(e["orders"])
each = [sorted(w["variant"] for w in e["windows"] if w["pair"] == i + 1) for i in range(o.pairs)]
check(f"{o.pairs} pairs, each one window of either side", len(e["ratios"]) == o.pairs and all(
    x == ["tomcat-sunjsse", "tomcat-tlsbridge-direct"] for x in each), each)
check("the A/B orders repeat with the seed and are not all alike", orders[0] == orders[1] and len(set(orders[0])) == 2,
      orders)

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
      [bench.parse(a).cluster for a in ([], ["--quick"], ["--variants", "nginx"])] == ["on", "off", "off"])
only = bench.parse(["--cluster", "only"])
check("--cluster only: no JMH, instruction counts, probe or profiles",
      (only.jmh, only.icount, only.probe, only.profile) == ("off",) * 4)
print(f"VERDICTS {passed} {failed}")
sys.exit(1 if failed else 0)
