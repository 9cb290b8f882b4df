"""report.md: which OpenSSL each tlsbridge variant really ran on (as its
server said per cell), and the "OpenSSL flavours" table: tlsbridge on the
system's OpenSSL 3.0 and on the bundled 3.5 beside SunJSSE 17/25 and nginx
on the flavour workloads (variants.FLAVOUR_CELLS)."""

import variants as V

# the table's columns: (variant, heading when no server reported a version)
COLUMNS = (("tomcat-tlsbridge-system", "tlsbridge system"), ("tomcat-tlsbridge", "tlsbridge bundled"),
           ("tomcat-sunjsse", "SunJSSE 17"), ("tomcat-sunjsse-25", "SunJSSE 25"), ("nginx", "nginx"))
SYSTEM, BUNDLED, SUNJSSE25 = "tomcat-tlsbridge-system", "tomcat-tlsbridge", "tomcat-sunjsse-25"


def served(results, variant):
    """'<flavour> <OpenSSL version>' as the variant's servers reported it in
    its cells ('; '-joined if they differ), or None."""
    seen = []
    for c in results["cells"]:
        if c["variant"] != variant:
            continue
        for r in c["reps"]:
            lib = (r.get("verified") or {}).get("tls_library")
            if lib:
                s = f"{lib.get('flavour')} {lib.get('openssl')}"
                if s not in seen:
                    seen.append(s)
    return "; ".join(seen) or None


def _short(version):
    # "bundled OpenSSL 3.5.5 27 Jan 2026" -> "bundled 3.5.5"
    parts = (version or "").split()
    return f"{parts[0]} {parts[2]}" if len(parts) >= 3 and parts[1] == "OpenSSL" else version


def _metric(mode):
    return ("cpu_ms_per_mb", "CPU ms/MB") if mode == "keepalive" else ("cpu_ms_per_req", "CPU ms/connection")


def _cell(results, variant, mode, size, skey):
    return next((c for c in results["cells"] if c["variant"] == variant and c["mode"] == mode
                 and c["size"] == size and c["suite_key"] == skey), None)


def _ratio(a, b, k):
    x = (a or {}).get("median", {}).get(k)
    y = (b or {}).get("median", {}).get(k)
    return f"{x / y:.2f}x" if x and y else "–"


def section(results, rng, size_label):
    """rng, size_label: report.py's formatting of a median [min–max] and a body size."""
    if not any(c["variant"] == SYSTEM for c in results["cells"]):
        return []
    rows = []
    for skey, mode, size in V.FLAVOUR_CELLS:
        sizes = sorted({c["size"] for c in results["cells"] if c["suite_key"] == skey and c["mode"] == mode
                        and (size is None or c["size"] == size)})
        rows += [(skey, mode, n) for n in sizes]
    if not rows:
        return []
    heads = [f"{h} ({_short(served(results, v))})" if served(results, v) else h for v, h in COLUMNS]
    md = ["## OpenSSL flavours\n",
          "tlsbridge on the system's libssl (`-Dtlsbridge.openssl=system`) and on its bundled OpenSSL, beside "
          "SunJSSE on JDK 17 and 25 and nginx (Debian's OpenSSL), all Tomcat NIO but nginx. Server CPU per MB "
          "(keep-alive) or per connection (new connection), median [min–max] of the reps; the flavour and "
          "OpenSSL version in each heading are what the servers reported in every cell (Tomcat /_stats). "
          "CPU ratios of the medians: below 1.00x bundled costs less.\n",
          "| workload | metric | " + " | ".join(heads) + " | CPU ratio bundled over system | "
          "CPU ratio bundled over SunJSSE 25 |",
          "|" + "---|" * (len(COLUMNS) + 4)]
    for skey, mode, n in rows:
        k, label = _metric(mode)
        cells = {v: _cell(results, v, mode, n, skey) for v, _ in COLUMNS}
        what = (f"keep-alive {size_label(n)}" if mode == "keepalive" else "new connection") + \
            f", {skey} ({'ECDSA P-256' if skey.endswith('-ec') else 'RSA-2048'})"
        vals = [(rng(c, k, 4) if c.get("verified") else f"**UNVERIFIED** {rng(c, k, 4)}") if c else "–"
                for c in cells.values()]
        md.append(f"| {what} | {label} | " + " | ".join(vals) + f" | {_ratio(cells[BUNDLED], cells[SYSTEM], k)} | "
                  f"{_ratio(cells[BUNDLED], cells[SUNJSSE25], k)} |")
    md.append("")
    return md
