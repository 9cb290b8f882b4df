"""Cluster cells: HAProxy (TCP mode, round-robin, 127.0.0.1) in
front of three bench Tomcat servers, for tlsbridge with one shared
session-ticket key file, tlsbridge with each node's own random keys, and
SunJSSE. wrk with Connection: close reconnects for every request and offers
the ticket of its last connection to whichever node the balancer picks next:
only shared keys let another node open it.

Resumed share comes from the wire: HAProxy captures each connection's
ServerHello (tcp-response content) and logs it; a TLS 1.3 ServerHello with a
pre_shared_key extension is the server accepting the client's ticket. The
same ServerHellos give the protocol, suite and group of every connection,
next to the servers' own /_stats counters (verify.py's approach)."""

import concurrent.futures
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import loadgen
import measure
import rules
import procs
import suites
import variants
import verify

NODES = 3
SIZE = 1024
# (name, bench variant whose server and servlet each node runs, shared key file?, what it shows)
CLUSTERS = [
    ("tlsbridge-shared-keys", "tomcat-tlsbridge", True, "tlsbridge, one ticket-key file on every node "
     "(-Dtlsbridge.ticketKeys)"),
    ("tlsbridge-per-node-keys", "tomcat-tlsbridge", False, "tlsbridge, each node its own random ticket keys "
     "(the default)"),
    ("sunjsse", "tomcat-sunjsse", False, "SunJSSE, each node its own keys"),
]
# a JVM per node gets a third of the load: its warm-up is capped apart from
# the regular cells' (--warmup), so the three clusters fit ~2 minutes
WARM_CAP_S = 20.0
# seconds per event beyond the load (a run on the loaded 2-vCPU machine):
# nine JVM starts on the one server CPU and three HAProxys, their stop; per
# window the nodes' /_stats and HAProxy's log. Warm-up windows are counted
# as rules.warm_windows says; at the cap (20 s each) the cells take ~3.1 min.
COST = {"start": 40.0, "stop": 8.0, "window": 0.5}
HAPROXY_CFG = """global
  nbthread 1
  maxconn 4000
  log stdout format raw local0
defaults
  mode tcp
  log global
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend fe
  bind 127.0.0.1:{port}
  maxconn 4000
  # one line per connection: the server's ServerHello (hex), bytes to the client, how it ended
  log-format "SH %[var(sess.sh)] %B %ts"
  default_backend nodes
backend nodes
  balance roundrobin
  tcp-response inspect-delay 5s
  tcp-response content set-var(sess.sh) res.payload_lv(3,2),hex if {{ res.payload_lv(3,2) -m found }}
  tcp-response content accept
{servers}
"""
SUITE_CODES = {0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384",
               0x1303: "TLS_CHACHA20_POLY1305_SHA256", 0xC02F: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
               0xC030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xC02B: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
               0xC02C: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
               0xCCA8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
               0xCCA9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"}
GROUP_CODES = {0x001D: "x25519", 0x001E: "x448", 0x0017: "secp256r1", 0x0018: "secp384r1", 0x0019: "secp521r1",
               0x11EC: "X25519MLKEM768"}
# SHA-256("HelloRetryRequest"): the random of a HelloRetryRequest
HRR_RANDOM = bytes.fromhex("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")


def wanted(o):
    return o.cluster in ("on", "only")


def estimate_seconds(o):
    windows = min(max(rules.WARM_AGREE, int(round(WARM_CAP_S / o.warmup_window))), rules.warm_windows(o))
    load = (lambda s: max(1, int(round(s))) + rules.COST["wrk"] + COST["window"])
    return len(CLUSTERS) * (windows * load(o.warmup_window) + o.reps * load(o.duration)) + COST["start"] + COST["stop"]


def server_hello(hexstr):
    """A ServerHello handshake message (hex) -> (protocol, suite, group,
    resumed); resumed is None where the hello cannot tell (TLS 1.2)."""
    b = bytes.fromhex(hexstr)
    if len(b) < 40 or b[0] != 2:
        raise ValueError("not a ServerHello")
    if b[6:38] == HRR_RANDOM:
        return "HelloRetryRequest", None, None, None
    i = 38
    i += 1 + b[i]                                   # legacy_session_id
    code = int.from_bytes(b[i:i + 2], "big")
    i += 3                                          # cipher_suite, compression
    proto = {0x0303: "TLSv1.2", 0x0302: "TLSv1.1", 0x0301: "TLSv1"}.get(int.from_bytes(b[4:6], "big"), "?")
    group, psk = None, False
    end = i + 2 + int.from_bytes(b[i:i + 2], "big") if i + 2 <= len(b) else i
    i += 2
    while i + 4 <= min(end, len(b)):
        typ, n = int.from_bytes(b[i:i + 2], "big"), int.from_bytes(b[i + 2:i + 4], "big")
        body = b[i + 4:i + 4 + n]
        if typ == 0x002B and int.from_bytes(body[:2], "big") == 0x0304:
            proto = "TLSv1.3"
        elif typ == 0x0033 and len(body) >= 2:
            g = int.from_bytes(body[:2], "big")
            group = GROUP_CODES.get(g, f"0x{g:04x}")
        elif typ == 0x0029:
            psk = True
        i += 4 + n
    return proto, SUITE_CODES.get(code, f"0x{code:04X}"), group, (psk if proto == "TLSv1.3" else None)


def parse_log(lines):
    """HAProxy's SH lines -> connections with a ServerHello, resumed ones,
    {"<protocol> <suite> <group>": n}, connections without one."""
    hellos, resumed, unknown, counts, none = 0, 0, 0, {}, 0
    for ln in lines:
        parts = ln.split()
        if len(parts) < 2 or parts[0] != "SH":
            continue
        if parts[1] == "-":
            none += 1  # closed before the server answered (wrk's time was up)
            continue
        try:
            proto, suite, group, res = server_hello(parts[1])
        except ValueError:
            none += 1
            continue
        hellos += 1
        k = f"{proto} {suite or '-'}" + (f" {group}" if group else "")
        counts[k] = counts.get(k, 0) + 1
        if res is None:
            unknown += 1
        resumed += bool(res)
    return {"hellos": hellos, "resumed": resumed, "resumption_unknown": unknown, "negotiated": counts,
            "no_hello": none}


class Cluster:
    def __init__(self, name, base, shared, note):
        self.name, self.base, self.shared, self.note = name, base, shared, note
        self.nodes, self.lb, self.lb_port, self.log_pos = [], None, None, 0

    def start(self, ctx, suite, keyfile):
        extra = [f"-Dtlsbridge.ticketKeys={keyfile}"] if self.shared else []
        with concurrent.futures.ThreadPoolExecutor(NODES) as ex:
            futs = [ex.submit(self.base.start, ctx, suite, extra, f"cluster-{self.name}-node{i + 1}")
                    for i in range(NODES)]
            errors = []
            for f in futs:
                try:
                    self.nodes.append(f.result())
                except variants.StartError as e:
                    errors.append(str(e).strip().splitlines()[-1:] or ["failed to start"])
        if errors:
            raise variants.StartError(f"{len(errors)} node(s) did not start: {errors[0][0]}")
        d = os.path.join(ctx.workdir, "cluster")
        self.lb_port = procs.free_port()
        cfg = os.path.join(d, f"haproxy-{self.name}.cfg")
        with open(cfg, "w") as f:
            f.write(HAPROXY_CFG.format(port=self.lb_port, servers="\n".join(
                f"  server node{i + 1} 127.0.0.1:{n.port}" for i, n in enumerate(self.nodes))))
        cmd = procs.pinned(procs.SERVER_CPU, ["haproxy", "-db", "-f", cfg])
        self.lb = procs.Proc(cmd, ctx.log(f"cluster-{self.name}-haproxy"))
        if not procs.wait_port(self.lb_port, 20, self.lb.p):
            raise variants.StartError("HAProxy did not listen: " + self.lb.output()[-500:])
        self.cmds = {"haproxy": cmd, "node": self.nodes[0].cmd}

    def log_lines(self):
        """HAProxy's log lines since the last call."""
        try:
            with open(self.lb.log_path, "rb") as f:
                f.seek(self.log_pos)
                data = f.read()
        except OSError:
            return []
        cut = data.rfind(b"\n") + 1  # a line still being written waits for the next call
        self.log_pos += cut
        return data[:cut].decode("utf-8", "replace").splitlines()

    def window(self, seconds, o, work, suite, check=True):
        """One timed window; check=False (warm-up) skips the nodes' /_stats."""
        before = [n.snapshot() for n in self.nodes] if check else [None] * NODES
        self.log_lines()
        node_pids = [p for n in self.nodes for p in procs.tree(n.proc.pid)]
        cpu0, lb0 = procs.cpu_seconds(node_pids), procs.cpu_seconds([self.lb.pid])
        busy0, steal0 = procs.cpu_busy(procs.SERVER_CPU)
        t0 = time.monotonic()
        r = loadgen.wrk(work, f"https://127.0.0.1:{self.lb_port}/{SIZE}", seconds, o.connections, close=True)
        wall = time.monotonic() - t0
        cpu, lb = procs.cpu_seconds(node_pids) - cpu0, procs.cpu_seconds([self.lb.pid]) - lb0
        busy1, steal1 = procs.cpu_busy(procs.SERVER_CPU)
        time.sleep(0.2)  # HAProxy logs a connection when it ends
        wire = parse_log(self.log_lines())
        alive = all(n.proc.alive() for n in self.nodes) and self.lb.alive()
        server = {}
        for n, b in zip(self.nodes, before if check else []):
            v = n.verification(b, suite) if n.proc.alive() else {"ok": False, "error": "server died", "seen": {}}
            for k, c in (v.get("seen") or {}).items():
                server[k] = server.get(k, 0) + c
            if v.get("error"):
                server.setdefault("error", v["error"])
        err = server.pop("error", None)
        vs = verify.judge(server, suite, "servers (Tomcat /_stats of the three nodes)" if check else "not checked")
        if err:
            vs.update(ok=False, error=err)
        vw = verify.judge(wire["negotiated"], suite, "wire (every ServerHello, captured by HAProxy)")
        n = r.requests
        # each of wrk's connections starts without a ticket: its first handshake is a full one
        offered = max(0, wire["hellos"] - o.connections)
        return {"requests": n, "seconds": round(r.wall, 3),
                "conn_per_s": round(n / r.wall, 1) if r.wall else 0.0,
                "handshakes": wire["hellos"], "resumed": wire["resumed"],
                "resumed_share": round(wire["resumed"] / wire["hellos"], 4) if wire["hellos"] else None,
                "offered": offered,
                "resumed_of_offered": round(min(wire["resumed"], offered) / offered, 4) if offered else None,
                "resumption_unknown": wire["resumption_unknown"], "no_hello": wire["no_hello"],
                "nodes_cpu_s": round(cpu, 3), "haproxy_cpu_s": round(lb, 3),
                "cpu_ms_per_conn": round(cpu * 1000.0 / n, 4) if n else None,
                "haproxy_ms_per_conn": round(lb * 1000.0 / n, 4) if n else None,
                "client_cpu_s": round(r.client_cpu, 3),
                "client_util": round(r.client_cpu / r.wall, 3) if r.wall else None,
                "others_on_server_cpu": round(max(0.0, busy1 - busy0 - cpu - lb) / wall, 3) if wall else None,
                "steal": round((steal1 - steal0) / wall, 3) if wall else None,
                "errors": sum(r.errors.values()), "error_kinds": r.errors,
                "verified": {"ok": bool(vs["ok"] and vw["ok"]), "servers": vs, "wire": vw},
                **({} if alive else {"server_died": True}),
                **({"client_output": r.raw} if isinstance(r.raw, str) else {})}, r.cmd

    def stop(self):
        if self.lb:
            self.lb.stop()
        for n in self.nodes:
            n.stop()


def warm(c, o, work, suite, log):
    """The cluster's own load in --warmup-window windows until rules.WARM_AGREE
    in a row agree on the nodes' CPU per connection, at most WARM_CAP_S."""
    t0, vals, converged = time.monotonic(), [], False
    cap = min(o.warmup, WARM_CAP_S)
    most = max(rules.WARM_AGREE, int(round(cap / o.warmup_window)))
    while len(vals) < most:
        r, _ = c.window(o.warmup_window, o, work, suite, check=False)
        vals.append(r["cpu_ms_per_conn"])
        if rules.agreed(vals):
            converged = True
            break
    log(f"  cluster {c.name} warm-up: {len(vals)} windows, {'converged' if converged else 'CAP, not converged'}: "
        f"{' '.join(f'{x:.4f}' for x in vals if x)}")
    return {"seconds": round(len(vals) * o.warmup_window, 1), "wall_s": round(time.monotonic() - t0, 1),
            "windows": vals, "converged": converged, "cap_s": cap}


STATS = ("resumed_share", "resumed_of_offered", "cpu_ms_per_conn", "haproxy_ms_per_conn", "conn_per_s", "errors")


def verdict(reps, side):
    seen = {}
    for r in reps:
        for k, n in (r["verified"][side].get("seen") or {}).items():
            seen[k] = seen.get(k, 0) + n
    return {"ok": bool(reps) and all(r["verified"][side].get("ok") for r in reps), "seen": seen,
            "source": reps[0]["verified"][side]["source"] if reps else side}


def haproxy_version():
    try:
        out = subprocess.run(["haproxy", "-v"], capture_output=True, text=True, timeout=10).stdout
        return out.split()[2] if out.startswith("HAProxy version") else out.strip()[:40]
    except (OSError, subprocess.TimeoutExpired):
        return None


def run(ctx, o, work, log):
    suite = suites.BY_KEY[rules.PRIMARY]
    res = {"ok": False, "suite_key": suite.key, "expected": {"protocol": suite.protocol, "suite": suite.iana},
           "nodes": NODES, "size": SIZE, "connections": o.connections, "reps": o.reps, "duration": o.duration,
           "client": "wrk (Connection: close)", "cells": [], "commands": {}}
    if not shutil.which("haproxy"):
        res["reason"] = "haproxy is not installed (apt: haproxy)"
        return res
    res["haproxy"] = haproxy_version()
    base = {v.name: v for v in variants.all_variants()}
    d = os.path.join(work, "cluster")
    os.makedirs(d, mode=0o700, exist_ok=True)
    # nginx's 80-byte format (docs/fleet.md); owner-only, or tlsbridge
    # refuses it; in a 0700 temporary directory, never in the results
    keydir = tempfile.mkdtemp(prefix="tb-bench-ticket-keys-")
    keyfile = os.path.join(keydir, "ticket.key")
    fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, os.urandom(80))
    os.close(fd)
    clusters, skipped = [], []
    try:
        for name, bname, shared, note in CLUSTERS:
            c = Cluster(name, base[bname], shared, note)
            ok, why = c.base.available(ctx)
            if ok:
                t = time.monotonic()
                try:
                    c.start(ctx, suite, keyfile)
                except variants.StartError as e:
                    why = str(e)
                    c.stop()
                except BaseException:
                    c.stop()
                    raise
                else:
                    log(f"  cluster {name}: HAProxy on {c.lb_port} (pid {c.lb.pid}), nodes on "
                        f"{', '.join(str(n.port) for n in c.nodes)} ({time.monotonic() - t:.0f} s)")
                    clusters.append(c)
                    continue
            log(f"  NOT AVAILABLE: cluster {name}: {why}")
            skipped.append({"what": f"cluster {name}", "why": why})
        for c in clusters:
            c.warmup = warm(c, o, d, suite, log)
        reps = {c: [] for c in clusters}
        for rep in range(o.reps):
            k = rep % len(clusters) if clusters else 0
            for c in clusters[k:] + clusters[:k]:
                r, cmd = c.window(o.duration, o, d, suite)
                r["rep"] = rep + 1
                reps[c].append(r)
                res["commands"]["client"] = cmd
                log(f"  cluster {c.name:24} rep {rep + 1}: {r['conn_per_s']:>8.1f} conn/s, resumed "
                    f"{r['resumed']}/{r['handshakes']}, {r['cpu_ms_per_conn'] or 0:.4f} ms/conn nodes + "
                    f"{r['haproxy_ms_per_conn'] or 0:.4f} HAProxy, err {r['errors']} "
                    f"{'ok' if r['verified']['ok'] else 'UNVERIFIED'}")
        for c in clusters:
            cell = {"cluster": c.name, "variant": c.base.name, "provider": c.base.provider, "jvm": c.base.jdk,
                    "shared_keys": c.shared, "note": c.note, "warmup": c.warmup, "reps": reps[c], "notes": []}
            cell.update(measure.summarize(reps[c], STATS))
            cell["verified_servers"] = verdict(reps[c], "servers")
            cell["verified_wire"] = verdict(reps[c], "wire")
            cell["verified"] = cell["verified_servers"]["ok"] and cell["verified_wire"]["ok"]
            busy = statistics.median([(r["others_on_server_cpu"] or 0) + (r["steal"] or 0) for r in reps[c]]) \
                if reps[c] else 0
            if busy > 0.1:
                cell["notes"].append(f"contended: other processes used {busy:.0%} of the server CPU")
            if reps[c] and statistics.median([r["client_util"] or 0 for r in reps[c]]) >= 0.9:
                cell["notes"].append("client-bound: wrk used its whole CPU")
            res["cells"].append(cell)
            res["commands"][c.name] = c.cmds
        res["ok"] = bool(res["cells"])
    finally:
        for c in clusters:
            c.stop()
        shutil.rmtree(keydir, ignore_errors=True)
    res["not_available"] = skipped
    if not res["ok"]:
        res["reason"] = "; ".join(f"{x['what']}: {x['why']}" for x in skipped) or "no cluster ran"
    return res


def pct(c, k):
    m = c.get("median", {}).get(k)
    if m is None:
        return "–"
    lo, hi = c["min"][k], c["max"][k]
    return f"{m:.0%}" + (f" [{lo:.0%}–{hi:.0%}]" if len(c["reps"]) > 1 else "")


def num(c, k, nd):
    m = c.get("median", {}).get(k)
    if m is None:
        return "–"
    f = (lambda x: f"{x:,.{nd}f}")
    return f(m) + (f" [{f(c['min'][k])}–{f(c['max'][k])}]" if len(c["reps"]) > 1 else "")


def report_section(results):
    r = results.get("cluster")
    if not r:
        return []
    md = [f"## Cluster behind HAProxy ({NODES} nodes)\n"]
    if not r.get("ok"):
        return md + [f"**NOT AVAILABLE**: {r.get('reason')}\n"]
    s = suites.BY_KEY[r["suite_key"]]
    md.append(f"HAProxy {r.get('haproxy') or ''} (TCP mode, round-robin, one thread) on 127.0.0.1 in front of "
              f"{NODES} processes of the bench's Tomcat server (the server and servlet of `tomcat-tlsbridge` / "
              f"`tomcat-sunjsse`); the {NODES} nodes and HAProxy pinned to the server CPU, wrk to the client CPU "
              f"with `Connection: close` ({r['connections']} connections): every request is a new connection, "
              f"offering the ticket of that connection's previous one to whichever node the balancer picks. "
              f"{s.label}, {SIZE} B bodies. Expected: ~100% resumed with a shared key file, about a "
              f"third with per-node keys and with SunJSSE.\n")
    md.append(f"Resumed share: from the wire, the servers' answer: HAProxy captures each connection's "
              f"ServerHello and logs it; one with a pre_shared_key extension accepted the client's ticket (no "
              f"client-side count). Each timed window starts a new wrk whose {r['connections']} connections have "
              f"no ticket for their first handshake: \"of offered\" leaves those out (resumed / (ServerHellos − "
              f"{r['connections']})). CPU per connection: utime+stime of the {NODES} server JVMs from /proc (sum) "
              f"and of HAProxy apart, over wrk's completed requests (one per connection). Median [min–max] of "
              f"{r['reps']} repetitions of {r['duration']} s, interleaved across the variants, after each cluster's "
              f"own warm-up (1 s windows until {rules.WARM_AGREE} agree within {rules.WARM_TOL:.0%} on the nodes' CPU "
              f"per connection, at most {WARM_CAP_S:.0f} s). Negotiated: the servers' /_stats counters and every "
              f"ServerHello must both say {s.protocol} {s.iana}.\n")
    md.append("| cluster | nodes run | resumed (all) | resumed (of offered) | cluster CPU ms/conn (3 nodes) | "
              "HAProxy CPU ms/conn | conn/s | negotiated (verified by) | errors | warm-up | notes |")
    md.append("|" + "---|" * 11)
    for c in r["cells"]:
        seen = c["verified_wire"]["seen"]
        top = max(seen, key=seen.get) if seen else "–"
        neg = top if c["verified"] else f"**UNVERIFIED** (servers {c['verified_servers']['seen']}; wire {seen})"
        hs = sum(x["handshakes"] for x in c["reps"])
        w = c.get("warmup") or {}
        warm = f"{w.get('seconds', 0):.0f} s" if w.get("converged") else f"**{w.get('seconds', 0):.0f} s cap**"
        md.append(" | ".join(["", c["cluster"], f"{c['variant']} ×{NODES}", pct(c, "resumed_share"),
                              pct(c, "resumed_of_offered"),
                              num(c, "cpu_ms_per_conn", 4), num(c, "haproxy_ms_per_conn", 4),
                              num(c, "conn_per_s", 1), f"{neg} (servers' /_stats + {hs} ServerHellos)",
                              str(sum(x["errors"] for x in c["reps"])), warm,
                              "; ".join([c["note"]] + c["notes"])]) + " |")
    md.append("")
    for x in r.get("not_available") or []:
        md.append(f"- **NOT AVAILABLE** {x['what']}: {x['why']}")
    cmds = r.get("commands", {})
    if cmds:
        md.append("```")
        for name, cc in cmds.items():
            if name == "client":
                md.append(f"# load\n{' '.join(cc)}")
            else:
                md.append(f"# {name}: HAProxy, then one of the nodes\n{' '.join(cc['haproxy'])}\n"
                          f"{' '.join(cc['node'])}")
        md.append("```\n")
    return md


def print_rows(results):
    r = results.get("cluster")
    for c in (r or {}).get("cells", []):
        print(f"{'cluster (3 nodes, HAProxy)':40} {c['cluster']:24} {c.get('median', {}).get('conn_per_s', 0):>10.1f} "
              f"{num(c, 'cpu_ms_per_conn', 4).split()[0]:>11} resumed {pct(c, 'resumed_share').split()[0]:>4}  "
              f"{'verified' if c['verified'] else 'UNVERIFIED'}")
