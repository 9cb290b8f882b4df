"""Post-quantum key exchange cells of the full run: full TLS 1.3 handshakes
(RSA-2048, AES-128-GCM) on tomcat-tlsbridge (bundled OpenSSL 3.5) with the
server pinned to X25519MLKEM768 or to X25519 (Tomcat's `groups`), driven by
OpenSSL 3.5's `s_time -new` (Debian's 3.0 in wrk and siege has no ML-KEM),
the client pinned to the same group through its OPENSSL_CONF so the
X25519 handshake carries no ML-KEM key share. Per group: server CPU per
connection, the negotiated group (server side, Tomcat /_stats; client side,
s_client) and the bytes each way (s_client's count at the end of its
handshake)."""

import json
import os
import re
import statistics
import subprocess

import rules
import procs
import suites
import variants
import verify

VARIANT = "tomcat-tlsbridge"
SUITE = "t13-aes128"
# (SunJSSE name the server is pinned to, OpenSSL name the client offers, name in the report)
GROUPS = (("X25519MLKEM768", "X25519MLKEM768", "X25519MLKEM768"), ("x25519", "X25519", "x25519"))
WARM_MAX = 20         # at most this many 1 s warm-up windows per server (_warm)
WARM_TYPICAL = 12     # what the estimate counts on (12-15 windows on the 2-vCPU machine)
SERVER_SOURCE = "server (Tomcat /_stats, fetched with s_client 3.5)"
START_S, STOP_S, RUN_S = 2.0, 2.0, 1.0  # a server start, its stop, one s_time run's set-up beyond its -time


def openssl35():
    """OpenSSL 3.5's command line: scripts/bench exports TB_OPENSSL35 (it
    builds it with scripts/lib/openssl.sh when the cache lacks it)."""
    p = os.environ.get("TB_OPENSSL35")
    if p and os.access(p, os.X_OK):
        return p
    # Where scripts/lib/openssl.sh keeps it (the cache directory names the
    # compiler's C library floor): asked, not guessed.
    found = subprocess.run(["bash", "-c", 'source "$1/scripts/lib/common.sh"; source "$1/scripts/lib/openssl.sh"; '
                            'tb_openssl_dir 3.5', "-", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")],
                           capture_output=True, text=True).stdout.strip()
    found = os.path.join(found, "bin", "openssl") if found else ""
    return found if os.access(found, os.X_OK) else None


def wanted(opts, names):
    """The full run, unless narrowed away: --variants without
    tomcat-tlsbridge, --suites without t13-aes128, --modes without newconn."""
    return (not opts.quick and VARIANT in names and (not opts.suites or SUITE in opts.suites)
            and (not opts.modes or "newconn" in opts.modes))


def estimate_seconds(opts):
    per_group = START_S + STOP_S + WARM_TYPICAL * (1 + RUN_S) + opts.reps * (max(1, round(opts.duration)) + RUN_S) + 1
    return len(GROUPS) * per_group


def _client_conf(work, group):
    path = os.path.join(work, f"pq-client-{group}.cnf")
    with open(path, "w") as f:
        f.write(f"openssl_conf = tb\n[tb]\nssl_conf = tb_ssl\n[tb_ssl]\nsystem_default = tb_sys\n"
                f"[tb_sys]\nGroups = {group}\n")
    return path


def _s_time(ossl, conf, port, seconds):
    cmd = procs.pinned(procs.CLIENT_CPU, [ossl, "s_time", "-connect", f"127.0.0.1:{port}", "-new",
                                          "-www", "/16", "-time", str(max(1, int(round(seconds))))])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30,
                       env=dict(os.environ, OPENSSL_CONF=conf))
    m = re.search(r"^(\d+) connections in [\d.]+ real seconds", p.stdout, re.M)
    return (int(m.group(1)) if m else 0), cmd, p.stdout[-400:] + p.stderr[-400:]


def _s_client(ossl, conf, port):
    cmd = [ossl, "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost"]
    p = subprocess.run(cmd, input="", capture_output=True, text=True, timeout=20,
                       env=dict(os.environ, OPENSSL_CONF=conf))
    out = p.stdout + p.stderr
    g = re.search(r"Negotiated TLS1.3 group: (\S+)|Peer Temp Key: ([A-Za-z0-9-]+)", out)
    b = re.search(r"SSL handshake has read (\d+) bytes and written (\d+) bytes", out)
    return {"group": (g.group(1) or g.group(2)) if g else None,
            "server_to_client": int(b.group(1)) if b else None,
            "client_to_server": int(b.group(2)) if b else None, "command": cmd}


def _stats(ossl, conf, port):
    """Tomcat's /_stats through OpenSSL 3.5 (the bench's own Python client,
    on Debian's 3.0, shares no group with a server pinned to ML-KEM)."""
    p = subprocess.run([ossl, "s_client", "-quiet", "-ign_eof", "-connect", f"127.0.0.1:{port}"],
                       input="GET /_stats HTTP/1.0\r\nHost: localhost\r\n\r\n", capture_output=True, text=True,
                       timeout=20, env=dict(os.environ, OPENSSL_CONF=conf))
    body = p.stdout.split("\n\n", 1)[-1]  # text mode has made the CRLFs newlines
    try:
        return json.loads(body)
    except ValueError:
        return {"error": (p.stdout + p.stderr)[-300:]}


def _server_check(before, after, suite):
    if "error" in before or "error" in after:
        v = verify.judge({}, suite, SERVER_SOURCE)
        v["error"] = before.get("error") or after.get("error")
        return v
    v = verify.judge(verify.diff_counts(before.get("negotiated", {}), after.get("negotiated", {})), suite,
                     SERVER_SOURCE)
    lib = after.get("tls_library")
    v["tls_library"] = dict(lib, flavour=variants.flavour_of(lib.get("library"))) if lib else None
    return v


def _warm(handles, ossl, most):
    """1 s windows, the servers taking turns (a load change on the shared
    machine hits both), each until WARM_AGREE of its windows in a row agree
    within WARM_TOL on CPU per connection (the JIT on the handshake path),
    at most `most` each."""
    vals = {label: [] for _, _, label in handles}
    done = {label: False for _, _, label in handles}
    while not all(done.values()):
        for h, conf, label in handles:
            if done[label]:
                continue
            r, _ = _rep(h, ossl, conf, 1)
            v = vals[label]
            v.append(r["cpu_ms_per_conn"])
            if rules.agreed(v):
                done[label] = "converged"
            elif len(v) >= most:
                done[label] = "cap"
    return {label: {"windows": vals[label], "converged": done[label] == "converged"} for label in vals}


def _rep(h, ossl, conf, seconds):
    c0 = h.cpu()
    n, cmd, tail = _s_time(ossl, conf, h.port, seconds)
    c1 = h.cpu()
    return {"connections": n, "cpu_s": round(c1 - c0, 3),
            "cpu_ms_per_conn": round((c1 - c0) * 1000 / n, 4) if n else None, "tail": tail if not n else ""}, cmd


def run(ctx, variant, opts, work, log):
    """Returns the section's record (results.json "pq")."""
    ossl = openssl35()
    if not ossl:
        return {"ok": False, "reason": "no OpenSSL 3.5 command line (scripts/lib/openssl.sh builds it; "
                                       "TB_OPENSSL35 names it)"}
    suite = suites.BY_KEY[SUITE]
    ver = subprocess.run([ossl, "version"], capture_output=True, text=True).stdout.strip()
    res = {"ok": True, "client": ver, "variant": variant.name, "suite": suite.label, "groups": [],
           "seconds": opts.duration, "reps": opts.reps, "commands": {}}
    handles = []
    try:
        for server_group, client_group, label in GROUPS:
            h = variant.start(ctx, suite, tag=f"{variant.name}-{suite.key}-pq-{client_group}",
                              extra_args=["--groups", server_group])
            handles.append((h, _client_conf(work, client_group), label))
            res["commands"][label] = {"server": h.cmd}
            log(f"  pq {label}: {variant.name} listening on {h.port} (pid {h.proc.pid})")
        warm = _warm(handles, ossl, WARM_MAX)
        for label, w in warm.items():
            log(f"  pq {label}: warm-up {len(w['windows'])} windows, "
                f"{'converged' if w['converged'] else 'CAP, not converged'}: "
                f"{' '.join(f'{x:.3f}' for x in w['windows'] if x)}")
        reps = {label: [] for _, _, label in handles}
        befores = {label: _stats(ossl, conf, h.port) for h, conf, label in handles}
        for i in range(opts.reps):
            order = handles[i % 2:] + handles[:i % 2]  # alternate which group goes first
            for h, conf, label in order:
                r, cmd = _rep(h, ossl, conf, opts.duration)
                reps[label].append(r)
                res["commands"][label]["client"] = cmd
                log(f"  pq {label:16} rep {i + 1}: {r['connections']} connections, "
                    f"{r['cpu_ms_per_conn'] or 0:.3f} ms CPU/connection")
        for h, conf, label in handles:
            server = _server_check(befores[label], _stats(ossl, conf, h.port), suite)
            client = _s_client(ossl, conf, h.port)
            ok_vals = [r["cpu_ms_per_conn"] for r in reps[label] if r["cpu_ms_per_conn"]]
            want = label.lower()
            # every sampled request on the server and the client's handshake ran the cell's group
            verified = bool(server.get("ok")) and (client["group"] or "").lower() == want and \
                all((verify.split_key(k)[2] or "").lower() == want for k in server.get("seen") or {})
            res["groups"].append({
                "group": label, "reps": reps[label],
                "warmup": warm[label], "median": statistics.median(ok_vals) if ok_vals else None,
                "min": min(ok_vals) if ok_vals else None, "max": max(ok_vals) if ok_vals else None,
                "server": {k: server.get(k) for k in ("seen", "group", "ok", "source", "tls_library", "error")},
                "client": client, "verified": verified})
            log(f"  pq {label}: {'verified' if verified else 'UNVERIFIED'} (server {server.get('seen')}, "
                f"client {client['group']}); bytes c->s {client['client_to_server']} "
                f"s->c {client['server_to_client']}")
    except Exception as e:  # a failed start or client: the section says why, the run goes on
        res.update(ok=False, reason=f"{type(e).__name__}: {e}")
    finally:
        for h, _, _ in handles:
            h.stop()
    return res


def _f(x, nd=3):
    return "–" if x is None else f"{x:.{nd}f}"


def section(results):
    pq = results.get("pq")
    if not pq:
        return []
    md = ["## Post-quantum key exchange\n"]
    if not pq.get("ok"):
        return md + [f"**NOT MEASURED**: {pq.get('reason')}\n"]
    lib = next((g["server"].get("tls_library") for g in pq["groups"] if g["server"].get("tls_library")), None) or {}
    md.append(f"Full handshakes, {pq['suite']}, on {pq['variant']} ({lib.get('flavour', '?')} "
              f"{lib.get('openssl', '?')}) with Tomcat's `groups` pinned to one group per server; the client is "
              f"{pq['client']} `s_time -new -www /16` pinned to the client CPU, offering only that group "
              f"(OPENSSL_CONF `Groups`), {pq['reps']} interleaved reps of {pq['seconds']:.0f} s after "
              f"a warm-up in 1 s windows until {rules.WARM_AGREE} agree within {rules.WARM_TOL:.0%} (warm-up column). CPU = server process CPU per connection (handshake + one 16-byte "
              f"response); bytes = `s_client`'s count at the end of its handshake (TLS records, both "
              f"directions); negotiated group checked on both sides.\n")
    md.append("| group | CPU ms/connection | connections/rep | bytes client→server | bytes server→client | "
              "negotiated (server; client) | CPU ratio PQ/X25519 | warm-up |")
    md.append("|---|---|---|---|---|---|---|---|")
    base = next((g for g in pq["groups"] if g["group"] == "x25519"), None)
    for g in pq["groups"]:
        cpu = f"{_f(g['median'])} [{_f(g['min'])}–{_f(g['max'])}]" if len(g["reps"]) > 1 else _f(g["median"])
        conns = "/".join(str(r["connections"]) for r in g["reps"])
        ratio = f"{g['median'] / base['median']:.2f}x" if base and g["median"] and base["median"] else "–"
        w = g.get("warmup") or {}
        warm_s = f"{len(w.get('windows', []))} s" + ("" if w.get("converged") else " **cap**")
        neg = f"{g['server'].get('group')}; {g['client'].get('group')}"
        neg = neg if g["verified"] else f"**UNVERIFIED** ({neg}; server saw {g['server'].get('seen')})"
        md.append(f"| {g['group']} | {cpu} | {conns} | {g['client'].get('client_to_server') or '–'} | "
                  f"{g['client'].get('server_to_client') or '–'} | {neg} | {ratio} | {warm_s} |")
    md.append("")
    return md
