"""JMH microbenchmarks (bench/jmh): wrap+unwrap and full handshakes,
tlsbridge vs SunJSSE, and beside them the engines users pick instead,
pinned to the server CPU."""

import json
import os
import re
import subprocess

import envinfo
import procs
import variants

OURS, REF = "TLSBridge", "SunJSSE"
# The provider param's other values (bench/jmh Engines.java): each engine
# pairs with itself on both ends, as tlsbridge's and SunJSSE's do; measured
# in the full run only (wrap+unwrap at 1 KiB, heap and direct, and the
# handshakes), in words for the report.
PEERS = {"Conscrypt": "Conscrypt (BoringSSL)", "SunJSSE-ACCP": "SunJSSE over ACCP (AWS-LC)",
         "Netty-OpenSSL": "Netty's OpenSSL engine (netty-tcnative, BoringSSL)",
         "wildfly-openssl": "wildfly-openssl (the system's OpenSSL 3)"}
# the engines that take no TLS 1.3 suite list: on their defaults, the
# negotiated suite checked to be TLS_AES_128_GCM_SHA256 all the same
DEFAULT_SUITES = ("Conscrypt", "Netty-OpenSSL")
# handshake keys a peer cannot serve, and why (Engines.WILDFLY_RSA_ONLY)
KEYS_NOT_SERVED = {"wildfly-openssl": ("ec", "wildfly-openssl 2.2.5 takes only RSA and DSA keys from its key "
                                             "manager: with an ECDSA P-256 key it has no certificate to send")}

PAIRS = 7
# forks, warm-up and measured iterations: the full run's 7 measured
# iterations because the JMH targets are judged on iteration-by-iteration
# ratios (pairs), at least 7 of them as for the paired cells
SHAPES = {"quick": ["-f", "1", "-wi", "1", "-w", "2s", "-i", "1", "-r", "2s"],
          "full": ["-f", "1", "-wi", "3", "-w", "2s", "-i", str(PAIRS), "-r", "1s"]}
# each benchmark class and the params it takes (JMH runs every combination
# of the values it is given)
BENCHES = {"WrapUnwrapBench": ("provider", "size", "buffers"), "HandshakeBench": ("provider", "key")}


def plans(quick):
    """Each JMH run's param values, every one named (the classes' own
    defaults play no part): tlsbridge and SunJSSE on every size, buffer
    kind and key; then the peers at 1 KiB, grouped by the keys they serve."""
    if quick:
        # smoke shape: one size and buffer kind, one key; SunJSSE is far
        # from warm after 2 s, so quick ratios flatter tlsbridge
        return [{"provider": [OURS, REF], "size": ["1024"], "buffers": ["heap"], "key": ["rsa"]}]
    out = [{"provider": [OURS, REF], "size": ["64", "1024", "16384"], "buffers": ["heap", "direct"],
            "key": ["rsa", "ec"]}]
    groups = {}
    for p in PEERS:
        keys = tuple(k for k in ("rsa", "ec") if KEYS_NOT_SERVED.get(p, (None,))[0] != k)
        groups.setdefault(keys, []).append(p)
    out += [{"provider": ps, "size": ["1024"], "buffers": ["heap", "direct"], "key": list(keys)}
            for keys, ps in groups.items()]
    return out


def selectors(plan):
    """A run's JMH arguments after its shape: its params and benchmarks."""
    return [x for k, vs in plan.items() for x in ("-p", f"{k}={','.join(vs)}")] + list(BENCHES)


def parameter_sets(quick):
    """How many benchmark and parameter sets a run measures: JMH forks and
    times each on its own, so the estimate counts them."""
    n = 0
    for plan in plans(quick):
        for params in BENCHES.values():
            k = 1
            for name in params:
                k *= len(plan[name])
            n += k
    return n


def jvm_args():
    """Every fork's JVM flags: the servers' own, and the system libssl that
    wildfly-openssl's natives open (as for tomcat-wildfly-openssl)."""
    return variants.JVM_FLAGS + variants.wildfly_libssl()


def _classpath(ctx):
    t = os.path.join(ctx.root, "bench", "jmh", "target")
    if not os.path.exists(os.path.join(t, "classpath.txt")):
        return None
    return os.path.join(t, "classes") + ":" + ctx.local_cp(open(os.path.join(t, "classpath.txt")).read())


def read_log(text):
    """What JMH's log says beyond its scores: the engine classes each
    benchmark's setup checked and printed (BENCH-ENGINE provider side class
    library), and each benchmark and parameter set that failed, with the
    exception's first line."""
    engines, failed = {}, []
    bench = params = None
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        ln = re.sub(r"^(# Warmup )?Iteration\s+\d+:\s*", "", ln)
        if ln.startswith("# Benchmark: "):
            bench = ln.split(": ", 1)[1].strip().rsplit(".", 2)
            bench = bench[-2] + "." + bench[-1]
        elif ln.startswith("# Parameters: "):
            params = dict(kv.split(" = ", 1) for kv in ln.split(": ", 1)[1].strip(" ()").split(", ") if " = " in kv)
        m = re.match(r"BENCH-ENGINE (\S+) (client|server) (\S+) ?(.*)", ln)
        if m:
            engines.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
            if m.group(4).strip() not in ("", "-"):
                engines[m.group(1)]["library"] = m.group(4).strip()
        if ln.startswith("<failure>"):
            why = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
            failed.append({"benchmark": bench, "params": params or {}, "error": why})
    return engines, failed


def run(ctx, quick, workdir, log):
    cp = _classpath(ctx)
    if not cp:
        return {"available": False, "reason": "bench/jmh is not built"}
    shape = SHAPES["quick" if quick else "full"]
    env = dict(os.environ, TB_BENCH_PKI=ctx.pki)
    logpath = os.path.join(workdir, "logs", "jmh.log")
    rows, cmds, failed, engines = [], [], [], {}
    open(logpath, "w").close()
    for n, plan in enumerate(plans(quick)):
        out = os.path.join(workdir, f"jmh-{n}.json")
        cmd = procs.pinned(procs.SERVER_CPU, [ctx.java["17"], "-cp", cp, "org.openjdk.jmh.Main"] + shape +
                           ["-jvmArgs", " ".join(jvm_args()), "-rf", "json", "-rff", out] + selectors(plan))
        cmds.append(cmd)
        log("JMH: " + " ".join(cmd))
        with open(logpath, "ab") as lf:
            lf.write(("$ " + " ".join(cmd) + "\n").encode())
            lf.flush()
            begin = lf.tell()
            rc = subprocess.run(cmd, env=env, stdout=lf, stderr=subprocess.STDOUT, timeout=3600).returncode
        with open(logpath, "rb") as lf:
            data = lf.read()
        # JMH goes on past a benchmark whose setup threw and exits 0: the
        # log says which failed and why
        seen, bad = read_log(data[begin:].decode(errors="replace"))
        for k, v in seen.items():
            engines.setdefault(k, {}).update(v)
        failed += bad
        if rc != 0 or not os.path.exists(out):
            if n == 0:
                return {"available": True, "ok": False, "reason": f"JMH exited {rc}",
                        "log_tail": data[-2000:].decode(errors="replace"), "command": cmd}
            failed.append({"benchmark": " and ".join(BENCHES), "params": {"provider": ",".join(plan["provider"])},
                           "error": f"JMH exited {rc}"})
            continue
        for b in json.load(open(out)):
            m = b["primaryMetric"]
            rows.append({"benchmark": b["benchmark"].rsplit(".", 2)[-2] + "." + b["benchmark"].rsplit(".", 1)[-1],
                         "params": b.get("params", {}), "score": m["score"], "error": m.get("scoreError"),
                         "unit": m["scoreUnit"], "raw": m.get("rawData")})
    not_served = [{"provider": p, "key": k, "why": why} for p, (k, why) in KEYS_NOT_SERVED.items() if not quick]
    return {"available": True, "ok": True, "command": cmds[0], "commands": cmds, "results": rows,
            "mode": "quick" if quick else "full", "engines": engines, "failed": failed, "not_served": not_served,
            "versions": versions(cp)}


def versions(cp):
    """The engines' versions as the JMH class path holds them (the parent
    pom's properties, the same as the servers')."""
    return {k: envinfo.jar_version(cp, a) for k, a in (("jmh", "jmh-core"), ("conscrypt", "conscrypt-openjdk-uber"),
                                                        ("accp", "AmazonCorrettoCryptoProvider"),
                                                        ("wildfly_openssl", "wildfly-openssl"),
                                                        ("netty", "netty-handler"),
                                                        ("netty_tcnative", "netty-tcnative-boringssl-static"))}




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
    cp = _classpath(ctx)
    outdir = os.path.join(workdir, "profiles")
    os.makedirs(outdir, exist_ok=True)
    res = os.path.join(outdir, tag + ".json")
    ps = [x for k, v in sorted(params.items()) for x in ("-p", f"{k}={v}")]
    # the library from the build tree, not extracted from the jar: the
    # extracted copy is deleted at exit, before perf script reads its symbols
    lib = os.path.join(ctx.root, "target", "native", "native", "libtlsbridge-bundled.so")
    own = [f"-Dtlsbridge.library.path={lib}"] if os.path.exists(lib) else []
    cmd = procs.pinned(procs.SERVER_CPU, [ctx.java["17"], "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit"]
                       + own + jvm_args() + ["-cp", cp, "org.openjdk.jmh.Main", "-f", "0", "-wi", "2", "-w", "1s",
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
