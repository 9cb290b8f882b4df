"""report.md's JMH section: each engine's time per operation in memory,
tlsbridge's over the other's, the engine classes each benchmark's setup
checked, and what was not measured, with why."""

import jmh
import targets as T

# the JMH engine a server variant's figure corresponds to, for the versions
# the engines table prints (results.json jmh.versions)
VERSION_OF = {"Conscrypt": ("conscrypt",), "SunJSSE-ACCP": ("accp",), "wildfly-openssl": ("wildfly_openssl",),
              "Netty-OpenSSL": ("netty", "netty_tcnative")}
ORDER = [jmh.OURS, jmh.REF] + list(jmh.PEERS)


def _n(x, nd=0):
    """A number with thousands separators; JMH's "NaN" (an error over too
    few iterations) and no value alike as a dash."""
    return f"{x:,.{nd}f}" if isinstance(x, (int, float)) and x == x else "–"


def _ratio(j, row):
    """tlsbridge's time per operation over this row's: a TLSBridge row over
    SunJSSE's, any other row under TLSBridge's (as the workload tables)."""
    p = dict(row["params"])
    prov = p.pop("provider", "")
    bench = row["benchmark"].split(".")[-1]
    if prov == jmh.OURS:
        r, _, _ = jmh.ratio(j, bench, p)
        return f"this / {jmh.REF}: {T.x(T.inv(r))}" if r else ""
    r, _, _ = jmh.ratio(j, bench, p, den=prov)
    return f"{jmh.OURS} / this: {T.x(T.inv(r))}" if r else ""


def _key(row):
    p = dict(row["params"])
    prov = p.pop("provider", "")
    return (row["benchmark"], [(k, v.zfill(8)) for k, v in sorted(p.items())],
            ORDER.index(prov) if prov in ORDER else len(ORDER))


def section(results):
    j = results.get("jmh")
    if not j:
        return []
    md = ["## JMH microbenchmarks (in-memory engine pair, pinned to the server CPU)\n"]
    if not j.get("ok"):
        return md + [f"**Not measured**: {j.get('reason')}\n"]
    peers = [p for p in jmh.PEERS if any(r["params"].get("provider") == p for r in j["results"])]
    md.append("Each engine's client and server are both its own, joined in memory (no socket). wrap+unwrap: the "
              "client writes one record of `size` bytes and the server reads it, after a TLS 1.3 AES-128-GCM "
              "handshake; handshake: a full TLS 1.3 AES-128-GCM handshake with the server's RSA-2048 or ECDSA P-256 "
              "key (`key`). "
              + (f"Beside tlsbridge and SunJSSE: {'; '.join(jmh.PEERS[p] for p in peers)}, at 1 KiB. "
                 f"{' and '.join(jmh.PEERS[p].split(' (')[0] for p in jmh.DEFAULT_SUITES if p in peers)} take no "
                 "TLS 1.3 suite list: they run on their defaults, and the setup checks that they negotiated "
                 "TLS_AES_128_GCM_SHA256 all the same.\n" if peers else "\n"))
    md.append("| benchmark | engine | params | ops/s | ± | ns per operation (1e9 / ops/s) | "
              "time per operation, tlsbridge's over the other's |\n|---|---|---|---|---|---|---|")
    for row in sorted(j["results"], key=_key):
        p = dict(row["params"])
        prov = p.pop("provider", "")
        md.append(f"| {row['benchmark']} | {prov} | {' '.join(f'{k}={v}' for k, v in sorted(p.items()))} | "
                  f"{_n(row['score'])} | {_n(row.get('error'))} | {_n(1e9 / row['score'])} | {_ratio(j, row)} |")
    md.append("")
    engines = j.get("engines") or {}
    if engines:
        vers = j.get("versions") or {}
        md.append("Engines as each benchmark's setup found them (it fails unless the class is the one named for "
                  "that engine, and for SunJSSE over ACCP unless AES-GCM comes from ACCP):\n")
        md.append("| engine | class (client; server) | runs on | version |\n|---|---|---|---|")
        for prov in sorted(engines, key=lambda p: ORDER.index(p) if p in ORDER else len(ORDER)):
            e = engines[prov]
            ver = ", ".join(f"{k} {vers[k]}" for k in VERSION_OF.get(prov, ()) if vers.get(k)) or "–"
            md.append(f"| {prov} | `{e.get('client', '–')}`; `{e.get('server', '–')}` | {e.get('library', '–')} | "
                      f"{ver} |")
        md.append("")
    gone = [f"{x['provider']} handshakes with key={x['key']}: {x['why']}" for x in j.get("not_served") or []]
    gone += [f"{x['benchmark']} {' '.join(f'{k}={v}' for k, v in sorted((x.get('params') or {}).items()))}: "
             f"{x['error']} (logs/jmh.log)" for x in j.get("failed") or []]
    if gone:
        md.append("**Not measured**:\n")
        md += [f"- {g}" for g in gone]
        md.append("")
    cmds = j.get("commands") or [j["command"]]
    md.append("Command" + ("s" if len(cmds) > 1 else "") + ":\n")
    md += [f"- `{' '.join(c)}`" for c in cmds]
    md.append("")
    return md
