#!/usr/bin/env python3
"""Instruction counts of the native engine core (tests/icount/icount.c under
valgrind --tool=callgrind): a full TLS 1.3 handshake, resumed handshakes
(TLS 1.3 ticket, TLS 1.2 ticket and session id; both ends per connection)
and 1 KiB / 16 KiB wrap+unwrap pairs (and 1 KiB over TLS 1.2) through tlsbridge's engines, against
plain OpenSSL SSL_write/SSL_read over a BIO pair (the floor); and a socket
server's keep-alive request on loopback TCP (its read of a ~100-byte request
and write of a 1 KiB response, TLS 1.3 and 1.2) through tlsbridge's native
sockets, against OpenSSL on the descriptor (SSL_set_fd, read ahead on). A second
build of the harness counts each operation's heap calls, run natively. A busy machine cannot move
these figures; the OpenSSL build and the CPU features valgrind reports can,
so the committed baseline (tests/icount/baseline.json) is keyed by the
OpenSSL version (and flavour) and records the CPU features it was taken with.

Each flavour of the core is counted on its own OpenSSL: "bundled" (OpenSSL
3.5 linked statically, what the jar loads by default and the bench runs)
and "system" (the host's libssl; the native tests' and fuzzers' build).

    bench/runner/icount.py [--build-dir target/native] [--flavour all|bundled|system]
                           [--runs 2] [--check] [--update-baseline] [--json FILE]

--check fails (exit 1) when a tlsbridge count is more than 5% above the
baseline or two runs differ by 0.5% or more; with no baseline for the
running OpenSSL it prints NOT RUN and exits 0. A flavour this build lacks
prints NOT AVAILABLE; exit 2 when no flavour asked for could be counted."""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "tests", "icount", "icount.c")
SRC_SOCKET = os.path.join(ROOT, "tests", "icount", "icount_socket.c")
BASELINE = os.path.join(ROOT, "tests", "icount", "baseline.json")
PAIRS = 64
# callgrind counts each iteration of a `rep stos` as one instruction, and
# glibc's memset switches to `rep stosb` (one iteration per byte) from 2 KiB
# on: the same zeroing costs 8 times the count of gcc's inlined `rep stosq`
# when a compiler calls memset instead, as clang does for OpenSSL's 2,376-byte
# one in tls_write_records_default (2,300 of a 1 KiB pair's 14,300 counted
# instructions). Keeping memset on its vector stores counts bytes zeroed
# alike, whichever compiler built OpenSSL.
REP_STOSB = "glibc.cpu.x86_rep_stosb_threshold=1073741824"
LIMIT = 0.05        # a tlsbridge count more than this above the baseline fails
REPRODUCE = 0.005   # two runs must agree within this
# what each callgrind dump is, in report order: (operation, label)
OPS = [("pair 1024", "1 KiB wrap+unwrap pair"), ("pair 16384", "16 KiB wrap+unwrap pair"),
       ("pair t12 1024", "1 KiB wrap+unwrap pair, TLS 1.2 AES-128-GCM"),
       ("handshake rsa", "full TLS 1.3 handshake, RSA-2048"), ("handshake ec", "full TLS 1.3 handshake, ECDSA P-256"),
       ("resumed t13-ticket", "resumed TLS 1.3 handshake (ticket), RSA, both ends"),
       ("resumed t12-ticket", "resumed TLS 1.2 handshake (ticket), RSA, both ends"),
       ("resumed t12-id", "resumed TLS 1.2 handshake (session id), RSA, both ends"),
       ("socket 1024", "socket server keep-alive request: read ~100 B, write 1 KiB (loopback TCP)"),
       ("socket t12 1024", "socket server keep-alive request: read ~100 B, write 1 KiB, TLS 1.2 AES-128-GCM")]
SIDES = ("tlsbridge", "openssl")
# The core's flavours, in report order (the jar's default first), and what
# the report calls them. The system-4 flavour (libssl.so.4) is not counted.
FLAVOURS = {"bundled": "bundled flavour (libtlsbridge-bundled.so: OpenSSL linked in statically; the jar's "
                       "default and the bench's tlsbridge variants)",
            "system": "system flavour (libtlsbridge.so on the host's libssl)"}


class Unavailable(Exception):
    pass


def build(build_dir, out_dir, heap=False, flavour="system"):
    """The harness linked against the flavour's tbcore of build_dir (the
    library the jar ships, from the same CMake build: same sources, defines
    and OpenSSL) and the fuzzers' fixed RAND; with heap, the variant that
    counts heap calls instead (run natively)."""
    lib, defines = _core(build_dir, flavour)
    if not os.path.exists("/usr/include/valgrind/callgrind.h") or not shutil.which("valgrind"):
        raise Unavailable("valgrind is not installed (Debian package valgrind)")
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "icount-heap" if heap else "icount")
    # -ldl: a static libcrypto needs it (CMake links the flavours with it too)
    cmd = ["cc"] + (["-DICOUNT_HEAP"] if heap else []) + [ "-std=c11", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes",
           "-Wmissing-prototypes", "-Wno-unused-parameter", "-D_GNU_SOURCE",
           "-I" + os.path.join(ROOT, "native", "core"), "-I" + os.path.join(ROOT, "native", "include"),
           "-I" + os.path.join(ROOT, "tests", "fuzz")] + defines + openssl_flags(build_dir, flavour) + [
           SRC, SRC_SOCKET, os.path.join(ROOT, "tests", "fuzz", "fuzz_rand.c"), lib] + openssl_libs(build_dir, flavour) + [
           "-lpthread", "-ldl", "-o", exe]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise Unavailable("the harness does not build:\n" + p.stderr[-3000:])
    return exe


def _cmake_cache(build_dir):
    """The OpenSSL the CMake build found for tbcore (the host's, or one given
    with -DOPENSSL_ROOT_DIR) and the bundled flavour's prefix and defines
    (TB_ICOUNT_BUNDLED_*, native/CMakeLists.txt): the harness must compile
    and link against the same OpenSSL as the core it counts."""
    out = {}
    try:
        for ln in open(os.path.join(build_dir, "CMakeCache.txt")):
            m = re.match(r"(OPENSSL_(?:INCLUDE_DIR|SSL_LIBRARY|CRYPTO_LIBRARY)|TB_ICOUNT_BUNDLED_\w+):\w+=(.+)$",
                         ln.strip())
            if m:
                out[m.group(1)] = m.group(2)
    except OSError:
        pass
    return out


def _openssl(build_dir, flavour):
    """The flavour's OpenSSL as the CMake cache names the system one
    (OPENSSL_INCLUDE_DIR, OPENSSL_SSL_LIBRARY, OPENSSL_CRYPTO_LIBRARY): for
    the bundled flavour, the static archives of its prefix (what tb_flavour
    in native/CMakeLists.txt links)."""
    c = _cmake_cache(build_dir)
    if flavour == "system":
        return c
    prefix = c.get("TB_ICOUNT_BUNDLED_OPENSSL")
    if not prefix:
        return {}
    return {"OPENSSL_INCLUDE_DIR": os.path.join(prefix, "include"),
            "OPENSSL_SSL_LIBRARY": os.path.join(prefix, "lib", "libssl.a"),
            "OPENSSL_CRYPTO_LIBRARY": os.path.join(prefix, "lib", "libcrypto.a")}


def _core(build_dir, flavour):
    """The flavour's tbcore archive in build_dir and the defines it was
    compiled with (the harness includes the core's headers, so it must see
    the same ones); Unavailable when this build or its OpenSSL lacks it."""
    if flavour == "system":
        lib = os.path.join(build_dir, "native", "libtbcore.a")
        if not os.path.exists(lib):
            raise Unavailable(f"{lib} not built (run mvn package first)")
        return lib, []
    lib = os.path.join(build_dir, "native", "libtbcore-bundled.a")
    c = _cmake_cache(build_dir)
    if "TB_ICOUNT_BUNDLED_OPENSSL" not in c or not os.path.exists(lib):
        raise Unavailable(f"{lib} not built (a build with -DTB_FLAVOURS=OFF, or run mvn package first)")
    ssl = _openssl(build_dir, flavour)["OPENSSL_SSL_LIBRARY"]
    if not os.path.exists(ssl):
        raise Unavailable(f"the bundled flavour's OpenSSL build is missing ({ssl}; scripts/openssl 3.5 builds it)")
    return lib, ["-D" + d for d in c.get("TB_ICOUNT_BUNDLED_DEFINES", "").split(";") if d]


def openssl_flags(build_dir, flavour="system"):
    inc = _openssl(build_dir, flavour).get("OPENSSL_INCLUDE_DIR")
    return ["-I" + inc] if inc and inc != "/usr/include" else []


def openssl_libs(build_dir, flavour="system"):
    c = _openssl(build_dir, flavour)
    libs = [c[k] for k in ("OPENSSL_SSL_LIBRARY", "OPENSSL_CRYPTO_LIBRARY") if k in c]
    if len(libs) != 2:
        return ["-lssl", "-lcrypto"]
    dirs = sorted({os.path.dirname(x) for x in libs if (x.endswith(".so") or ".so." in x)
                   and not x.startswith(("/usr/lib/", "/lib/"))})
    return libs + [f"-Wl,-rpath,{d}" for d in dirs]


def run(exe, pairs=PAIRS):
    """One callgrind run: per operation, instructions per op on each side."""
    with tempfile.TemporaryDirectory(prefix="tb-icount.") as d:
        out = os.path.join(d, "cg")
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--dump-instr=no",
               "--compress-strings=no", f"--callgrind-out-file={out}", exe, str(pairs)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=dict(os.environ, GLIBC_TUNABLES=REP_STOSB))
        if p.returncode != 0 or "icount ok" not in p.stdout:
            raise RuntimeError(f"harness failed under callgrind (exit {p.returncode}):\n{p.stdout}\n{p.stderr[-3000:]}")
        info = dict(re.findall(r"^icount (cpu|openssl): ?(.*)$", p.stdout, re.M))
        ops = {}
        for f in glob.glob(out + ".*"):
            text = open(f).read()
            m = re.search(r"^desc: Trigger: Client Request: (\S+) (.+)$", text, re.M)
            t = re.search(r"^totals: (\d+)", text, re.M)
            if not m or not t:
                continue
            side, what = m.group(1), m.group(2)
            n = re.search(r" x(\d+)$", what)
            if n:
                what = what[:n.start()]
            per = int(t.group(1)) / (int(n.group(1)) if n else 1)
            ops.setdefault(what, {})[side] = round(per)
    missing = [k for k, _ in OPS if set(ops.get(k, {})) != set(SIDES)]
    if missing:
        raise RuntimeError(f"callgrind dumps missing for {missing}")
    return {"openssl": info.get("openssl", "?"), "cpu": info.get("cpu", "?"), "pairs": pairs,
            "ops": {k: ops[k] for k, _ in OPS}, "command": " ".join([c for c in cmd[:-2] if not c.startswith("--callgrind-out")] + ["icount", str(pairs)])}


def heap_counts(exe, pairs=PAIRS):
    """Per operation and side: heap calls (malloc, calloc, realloc), bytes
    asked for and frees per op, from the ICOUNT_HEAP harness run natively
    (fixed RAND: the same every run)."""
    p = subprocess.run([exe, str(pairs)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or "icount ok" not in p.stdout:
        raise RuntimeError(f"heap-counting harness failed (exit {p.returncode}):\n{p.stdout}\n{p.stderr[-3000:]}")
    heap = {}
    for side, what, allocs, nbytes, frees in re.findall(
            r"^icount heap (\S+) (.+?): (\d+) allocs (\d+) bytes (\d+) frees$", p.stdout, re.M):
        n = re.search(r" x(\d+)$", what)
        div = int(n.group(1)) if n else 1
        what = what[:n.start()] if n else what
        heap.setdefault(what, {})[side] = {"allocs": round(int(allocs) / div, 1),
                                           "bytes": round(int(nbytes) / div), "frees": round(int(frees) / div, 1)}
    return {k: heap.get(k, {}) for k, _ in OPS}


def measure(build_dir, out_dir, runs=2, pairs=PAIRS, flavour="system"):
    """runs callgrind runs of the flavour's harness; the result of the
    first, with how far the others moved (max relative difference of any
    count), and the heap counts."""
    exe = build(build_dir, out_dir, flavour=flavour)
    results = [dict(run(exe, pairs), flavour=flavour) for _ in range(runs)]
    results[0]["heap"] = heap_counts(build(build_dir, out_dir, heap=True, flavour=flavour), pairs)
    spread = 0.0
    for r in results[1:]:
        for k, _ in OPS:
            for s in SIDES:
                a, b = results[0]["ops"][k][s], r["ops"][k][s]
                spread = max(spread, abs(a - b) / max(a, 1))
    res = dict(results[0], runs=runs, spread=spread)
    res["baseline"] = compare(res, load_baseline())
    return res


def measure_all(build_dir, out_dir, runs=2, pairs=PAIRS, flavours=tuple(FLAVOURS)):
    """measure() per flavour (in out_dir/<flavour>), in FLAVOURS order: its
    result with ok True, or ok False and the reason (not_available when this
    build lacks the flavour or valgrind, rather than the harness failing)."""
    out = {}
    for f in [f for f in FLAVOURS if f in flavours]:
        try:
            out[f] = dict(measure(build_dir, os.path.join(out_dir, f), runs, pairs, f), ok=True)
        except Unavailable as e:
            out[f] = {"ok": False, "not_available": True, "reason": str(e)}
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            out[f] = {"ok": False, "reason": f"failed: {e}"}
    return out


def load_baseline(path=BASELINE):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def baseline_key(res):
    """The baseline entry a result is compared with: its OpenSSL version,
    prefixed by the flavour but for the system one (whose entries predate
    flavours). The bundled core is compiled otherwise (TB_OPENSSL_PRIVATE)
    and its OpenSSL configured otherwise than a distribution's, so a host
    libssl of the same version must not meet its counts."""
    flavour = res.get("flavour", "system")
    return res["openssl"] if flavour == "system" else f"{flavour} {res['openssl']}"


def compare(res, baselines):
    """Each tlsbridge count against the baseline for this flavour and
    OpenSSL: status OK, FAIL (above +5%), or NOT RUN (no baseline for this
    build) with why."""
    key = baseline_key(res)
    base = baselines.get(key)
    if not base:
        have = ", ".join(sorted(baselines)) or "none"
        return {"status": "NOT RUN", "why": f"no baseline for {key} (baselines exist for: {have}); "
                                            f"counts depend on the libssl build"}
    if base.get("cpu") != res["cpu"]:
        return {"status": "NOT RUN", "why": f"the baseline for {key} was taken with CPU features "
                                            f"'{base.get('cpu')}', this run sees '{res['cpu']}' (OpenSSL takes "
                                            f"other code paths)"}
    rows, fail = {}, False
    for k, _ in OPS:
        b = base["ops"].get(k, {})
        row = {}
        for s in SIDES:
            if b.get(s):
                row[s] = res["ops"][k][s] / b[s] - 1
        rows[k] = row
        fail |= row.get("tlsbridge", 0) > LIMIT
    return {"status": "FAIL" if fail else "OK", "delta": rows, "taken": base.get("taken", "?")}


def table(res):
    """Markdown lines for the bench report and the test log: instructions,
    then heap calls (malloc, calloc and realloc; bytes asked for) per op."""
    out = ["| operation | tlsbridge instructions | plain OpenSSL | tlsbridge over plain OpenSSL | vs baseline "
           "(tlsbridge) | heap allocs tlsbridge / plain OpenSSL | heap bytes tlsbridge / plain OpenSSL |",
           "|---|---|---|---|---|---|---|"]
    delta = (res.get("baseline") or {}).get("delta", {})
    for k, label in OPS:
        if k not in res["ops"]:
            continue  # a result from before the op existed (an older run's results.json)
        a, b = res["ops"][k]["tlsbridge"], res["ops"][k]["openssl"]
        d = delta.get(k, {}).get("tlsbridge")
        h = res.get("heap", {}).get(k, {})
        ht, ho = h.get("tlsbridge"), h.get("openssl")
        allocs = f"{ht['allocs']:g} / {ho['allocs']:g}" if ht and ho else "–"
        nbytes = f"{ht['bytes']:,} / {ho['bytes']:,}" if ht and ho else "–"
        out.append(f"| {label} | {a:,} | {b:,} | {a / b:.3f}x | {'–' if d is None else f'{d:+.2%}'} "
                   f"| {allocs} | {nbytes} |")
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "target", "native"))
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "icount"))
    ap.add_argument("--flavour", choices=["all"] + list(FLAVOURS), default="all",
                    help="which flavour's core to count (default all: what scripts/test and scripts/bench count)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=PAIRS)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--update-baseline", action="store_true",
                    help="write this run's counts as the baseline for each counted flavour's OpenSSL")
    ap.add_argument("--json", help="write the results here, keyed by flavour")
    o = ap.parse_args(argv)
    flavours = tuple(FLAVOURS) if o.flavour == "all" else (o.flavour,)
    results = measure_all(os.path.abspath(o.build_dir), os.path.abspath(o.out), o.runs, o.pairs, flavours)
    rc, baselines = 0, load_baseline()
    for f, res in results.items():
        print(f"== {FLAVOURS[f]}")
        if not res["ok"]:
            print(("NOT AVAILABLE: " if res.get("not_available") else "FAILED: ") + res["reason"] + "\n")
            rc = rc if res.get("not_available") else 1
            continue
        print(f"OpenSSL: {res['openssl']}; CPU features (as valgrind shows them): {res['cpu']}")
        print(f"{res['runs']} callgrind runs, {res['pairs']} pairs (socket requests) per region; largest difference between runs "
              f"{res['spread']:.4%}")
        print("\n".join(table(res)))
        b = res["baseline"]
        if b["status"] == "NOT RUN":
            print(f"\nNOT RUN: baseline comparison: {b['why']}\n")
        else:
            print(f"\nbaseline of {b['taken']}: {b['status']}\n")
        if o.update_baseline:
            import datetime
            baselines[baseline_key(res)] = {"cpu": res["cpu"], "pairs": res["pairs"],
                                            "taken": datetime.date.today().isoformat(), "ops": res["ops"]}
            with open(BASELINE, "w") as fh:
                json.dump(baselines, fh, indent=1, sort_keys=True)
                fh.write("\n")
            print(f"baseline for {baseline_key(res)} written to {os.path.relpath(BASELINE, ROOT)}\n")
        if o.check and (b["status"] == "FAIL" or res["spread"] >= REPRODUCE):
            rc = 1
    if o.json:
        with open(o.json, "w") as fh:
            json.dump(results, fh, indent=1)
    if all(r.get("not_available") for r in results.values()):
        return 2
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
