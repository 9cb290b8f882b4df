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
        # 7 measured iterations: item 4 is judged on iteration-by-iteration
        # ratios (pairs), at least 7 of them as for the paired cells
        shape = ["-f", "1", "-wi", "3", "-w", "2s", "-i", str(PAIRS), "-r", "1s"]
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


PAIRS = 7


def _row(res, bench, params, provider):
    """The result row of one benchmark, parameter set and provider, or None."""
    for r in res.get("results", []):
        if r["benchmark"].endswith(bench) and all(r["params"].get(k) == v
                                                  for k, v in {**params, "provider": provider}.items()):
            return r
    return None


def pair_ratios(res, bench, params, num="TLSBridge", den="SunJSSE"):
    """Iteration i of num over iteration i of den (the last n of each, n the
    shorter): JMH runs one provider's iterations after the other's, so
    these are not interleaved pairs, but their spread shows how far one
    run's score can be trusted."""
    def raw(p):
        r = _row(res, bench, params, p)
        return [x for fork in (r.get("raw") or []) for x in fork] if r else []
    a, b = raw(num), raw(den)
    n = min(len(a), len(b))
    return [x / y for x, y in zip(a[len(a) - n:], b[len(b) - n:]) if y] if n else []


def ratio(res, bench, params, num="TLSBridge", den="SunJSSE"):
    a, b = ((_row(res, bench, params, p) or {}).get("score") for p in (num, den))
    return (a / b if a and b else None), a, b


def profile(ctx, perf, bench, params, seconds, workdir, tag):
    """A perf profile of one JMH benchmark (one parameter set), run in the
    JMH process itself (-f 0) pinned to the server CPU so its pid is known;
    the JVM writes its perf map at exit for the JIT-compiled frames. CPU per
    operation is taken as 1000/score ms (one busy benchmark thread); the
    profile covers the short warm-up too."""
    import perfprofile
    t = os.path.join(ctx.root, "bench", "jmh", "target")
    cp = os.path.join(t, "classes") + ":" + ctx.local_cp(open(os.path.join(t, "classpath.txt")).read())
    outdir = os.path.join(workdir, "profiles")
    os.makedirs(outdir, exist_ok=True)
    res = os.path.join(outdir, tag + ".json")
    ps = [x for k, v in sorted(params.items()) for x in ("-p", f"{k}={v}")]
    # the library from the build tree, not extracted from the jar: the
    # extracted copy is deleted at exit, before perf script reads its symbols
    lib = os.path.join(ctx.root, "target", "native", "native", "libtlsbridge-bundled.so")
    own = [f"-Dtlsbridge.library.path={lib}"] if os.path.exists(lib) else []
    cmd = procs.pinned(procs.SERVER_CPU, [ctx.java["17"], "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit"]
                       + own + variants.JVM_FLAGS + ["-cp", cp, "org.openjdk.jmh.Main", "-f", "0", "-wi", "2", "-w", "1s",
                                               "-i", "1", "-r", f"{int(seconds)}s", "-rf", "json", "-rff", res]
                       + ps + [bench + "$"])
    data = os.path.join(outdir, tag + ".data")
    pcmd, pp = perfprofile.start(perf, data, 120)
    env = dict(os.environ, TB_BENCH_PKI=ctx.pki)
    with open(os.path.join(workdir, "logs", "jmh-profile.log"), "a") as lf:
        lf.write("$ " + " ".join(cmd) + "\n")
        lf.flush()
        p = subprocess.Popen(cmd, env=env, stdout=lf, stderr=subprocess.STDOUT)
        try:
            rc = p.wait(120)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
    perfprofile.finish(pp, 60, stop=True)
    if rc != 0 or not os.path.exists(res) or not os.path.exists(data):
        return {"ok": False, "command": cmd, "error": f"JMH exited {rc} (logs/jmh-profile.log)"}
    score = json.load(open(res))[0]["primaryMetric"]["score"]
    ms_per_op = 1000.0 / score if score else None
    r = perfprofile.analyze(perf, data, p.pid, ms_per_op, outdir, tag,
                            f"JMH {bench} {params}: {score:,.0f} ops/s, ~{ms_per_op:.5f} ms CPU/op")
    r.update({"command": cmd, "perf_command": pcmd, "rep": {"cpu_ms_per_req": ms_per_op, "ops_per_s": score}})
    return r
