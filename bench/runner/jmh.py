"""JMH microbenchmarks (bench/jmh): wrap+unwrap and full handshakes,
tlsbridge vs SunJSSE, pinned to the server CPU."""

import json
import os
import subprocess

import procs
import variants


def run(ctx, quick, workdir, log):
    t = os.path.join(ctx.root, "bench", "jmh", "target")
    if not os.path.exists(os.path.join(t, "classpath.txt")):
        return {"available": False, "reason": "bench/jmh is not built"}
    cp = os.path.join(t, "classes") + ":" + ctx.local_cp(open(os.path.join(t, "classpath.txt")).read())
    out = os.path.join(workdir, "jmh.json")
    if quick:
        # smoke shape: one size and buffer kind, one key; SunJSSE is far
        # from warm after 2 s, so quick ratios flatter tlsbridge
        shape = ["-f", "1", "-wi", "1", "-w", "2s", "-i", "1", "-r", "2s", "-p", "size=1024", "-p", "buffers=heap",
                 "-p", "key=rsa"]
    else:
        shape = ["-f", "1", "-wi", "3", "-w", "2s", "-i", "4", "-r", "1s"]
    cmd = procs.pinned(procs.SERVER_CPU, [ctx.java["17"], "-cp", cp, "org.openjdk.jmh.Main"] + shape +
                       ["-jvmArgs", " ".join(variants.JVM_FLAGS), "-rf", "json", "-rff", out,
                        "WrapUnwrapBench", "HandshakeBench"])
    env = dict(os.environ, TB_BENCH_PKI=ctx.pki)
    log("JMH: " + " ".join(cmd))
    with open(os.path.join(workdir, "logs", "jmh.log"), "w") as lf:
        rc = subprocess.run(cmd, env=env, stdout=lf, stderr=subprocess.STDOUT, timeout=3600).returncode
    if rc != 0 or not os.path.exists(out):
        tail = open(os.path.join(workdir, "logs", "jmh.log")).read()[-2000:]
        return {"available": True, "ok": False, "reason": f"JMH exited {rc}", "log_tail": tail, "command": cmd}
    rows = []
    for b in json.load(open(out)):
        m = b["primaryMetric"]
        rows.append({"benchmark": b["benchmark"].rsplit(".", 2)[-2] + "." + b["benchmark"].rsplit(".", 1)[-1],
                     "params": b.get("params", {}), "score": m["score"], "error": m.get("scoreError"),
                     "unit": m["scoreUnit"], "raw": m.get("rawData")})
    return {"available": True, "ok": True, "command": cmd, "results": rows, "mode": "quick" if quick else "full"}


def ratio(res, bench, params, num="TLSBridge", den="SunJSSE"):
    def score(p):
        for r in res.get("results", []):
            if r["benchmark"].endswith(bench) and all(r["params"].get(k) == v for k, v in {**params, "provider": p}.items()):
                return r["score"]
        return None
    a, b = score(num), score(den)
    return (a / b if a and b else None), a, b
