#!/usr/bin/env python3
"""Side-by-side summary of two testssl.sh flat-JSON scans (tlsbridge, SunJSSE).

Prints Markdown. Exit status is a bit set:
  1  tlsbridge has a MEDIUM/HIGH/CRITICAL finding or a "VULNERABLE" one in
     what the TLS stack decides: protocols, cipher categories and suites,
     forward secrecy, vulnerabilities;
  2  tlsbridge is weaker than SunJSSE: some finding id, any section, is more
     severe for it;
  4  a scan is missing or unreadable;
  8  tlsbridge has a LOW finding there (e.g. LUCKY13 "potentially vulnerable"
     or "obsoleted" CBC suites offered): stricter than asked, so that a CBC
     suite creeping into the defaults fails the scan.
Findings of MEDIUM and above elsewhere (server cipher order, the servlet's
HTTP headers, the test certificate) are listed with both servers' values.
"""
import argparse
import json
import re
import sys

RANK = {"OK": 0, "INFO": 0, "DEBUG": 0, "WARN": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}
PROTOCOLS = ["SSLv2", "SSLv3", "TLS1", "TLS1_1", "TLS1_2", "TLS1_3"]
VULNS = ["heartbleed", "CCS", "ticketbleed", "ROBOT", "secure_renego", "secure_client_renego", "CRIME_TLS",
         "BREACH", "POODLE_SSL", "fallback_SCSV", "SWEET32", "FREAK", "DROWN", "DROWN_hint", "LOGJAM",
         "LOGJAM-common_primes", "BEAST", "BEAST_CBC_TLS1", "LUCKY13", "RC4", "winshock", "GREASE"]
DEFAULTS = ["TLS_extensions", "TLS_session_ticket", "SSL_sessionID_support", "sessionresumption_ticket",
            "sessionresumption_ID", "TLS_timestamp", "cipher_order", "protocol_negotiated", "cipher_negotiated",
            "ALPN", "ALPN_HTTP2", "NPN", "HSTS", "banner_server"]


def is_cert(i):
    return i.startswith(("cert", "intermediate_cert", "chain_of_trust")) or i in (
        "OCSP_stapling", "DNS_CAArecord", "certificate_transparency", "certs_countServer", "certs_list_ordering_problem")


def load(path):
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict):  # pretty format, should it be given
        data = [f for s in data.get("scanResult", []) for v in s.values() if isinstance(v, list) for f in v]
    out = {}
    for e in data:
        i = e.get("id", "")
        # one id may repeat (several certificates); keep the most severe
        if i not in out or RANK.get(e.get("severity"), 0) > RANK.get(out[i]["severity"], 0):
            out[i] = {"severity": e.get("severity", ""), "finding": e.get("finding", "")}
    return out


def is_core(i):
    """What the TLS stack decides, as opposed to the certificate, the HTTP application or the scan."""
    return (i in PROTOCOLS or i in VULNS or i.startswith(("cipherlist_", "cipher-", "DH_groups", "FS_"))
            or re.match(r"P?FS($|_)", i) is not None)


def flagged(f):
    return RANK.get(f["severity"], 0) >= 2 or "VULNERABLE" in f["finding"]


def cell(f):
    if f is None:
        return "—"
    text = f["finding"].replace("|", "\\|")
    if len(text) > 110:
        text = text[:107] + "..."
    mark = " **⚠**" if flagged(f) else ""
    return f"{f['severity']}: {text}{mark}"


def suites(scan, proto):
    """IANA names offered for a protocol, from -E (cipher-<proto>_xNNNN ids)."""
    names = []
    for i, f in scan.items():
        if re.match(rf"cipher-{proto}_x[0-9a-fA-F]+$", i):
            m = re.search(r"(TLS_\w+)\s*$", f["finding"])
            names.append(m.group(1) if m else f["finding"])
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tlsbridge")
    ap.add_argument("sunjsse")
    ap.add_argument("--baseline", action="store_true",
                    help="the SunJSSE scan is the committed one, not made in this run")
    for k in ("java", "tomcat", "testssl", "openssl", "seconds"):
        ap.add_argument("--" + k, default="?")
    a = ap.parse_args()
    try:
        tb, sun = load(a.tlsbridge), load(a.sunjsse)
    except (OSError, ValueError) as e:
        print(f"cannot read a scan: {e}")
        return 4
    rc = 0
    p = print
    p("# testssl.sh: Tomcat + tlsbridge vs Tomcat + SunJSSE, default settings\n")
    if a.baseline:
        p(f"- scanner: {a.testssl} with {a.openssl} (Debian 12 package); the tlsbridge scan took {a.seconds} s; "
          "the SunJSSE column is the committed scan (tests/testssl/results/sunjsse.json), not re-run")
    else:
        p(f"- scanner: {a.testssl} with {a.openssl} (Debian 12 package); both scans took {a.seconds} s in all")
    p(f"- server: embedded Tomcat {a.tomcat} (bench/server BenchServer), NIO connector on 127.0.0.1, "
      "SSLHostConfig with one RSA 2048 certificate and nothing else set (no ciphers, no protocols)")
    p(f"- JVM: {a.java}; SunJSSE = Tomcat's default JSSEImplementation; tlsbridge = "
      "sslImplementationName=org.tlsbridge.tomcat.TlsBridgeImplementation")
    p("- commands: see commands.txt; full findings: tlsbridge.json / sunjsse.json (testssl's flat JSON), "
      "tlsbridge.log / sunjsse.log\n")
    p("testssl.sh 3.0.8 computes no overall grade (its rating arrived in 3.1); the comparison below is "
      "finding by finding, on testssl's own severities (OK/INFO < LOW < MEDIUM < HIGH < CRITICAL).\n")

    def table(title, ids):
        p(f"## {title}\n")
        p("| check | tlsbridge | SunJSSE |")
        p("|---|---|---|")
        for i in ids:
            if i in tb or i in sun:
                p(f"| {i} | {cell(tb.get(i))} | {cell(sun.get(i))} |")
        p("")

    table("Protocols offered", PROTOCOLS)
    table("Cipher categories", sorted(i for i in set(tb) | set(sun) if i.startswith("cipherlist_")))
    table("Forward secrecy", sorted(i for i in set(tb) | set(sun)
                                    if re.match(r"P?FS($|_)", i) or i.startswith(("DH_groups", "FS_"))))
    p("## Suites offered (testssl -E)\n")
    p("| protocol | tlsbridge | SunJSSE |")
    p("|---|---|---|")
    for proto in ("tls1", "tls1_1", "tls1_2", "tls1_3"):
        a_, b_ = suites(tb, proto), suites(sun, proto)
        if a_ or b_:
            def fmt(lst):
                cbc = sum(1 for n in lst if "_CBC_" in n)
                return f"{len(lst)} ({cbc} CBC): " + ", ".join(lst) if lst else "none"
            p(f"| {proto} | {fmt(a_)} | {fmt(b_)} |")
    p("")
    table("Vulnerabilities", VULNS)
    table("Server defaults and preferences (selection)", DEFAULTS)

    def counts(scan, cert):
        c = {"LOW": 0, "MEDIUM": 0, "HIGH": 0, "CRITICAL": 0}
        for i, f in scan.items():
            if is_cert(i) == cert and f["severity"] in c:
                c[f["severity"]] += 1
        return c

    p("## Findings by severity\n")
    p("| | tlsbridge | SunJSSE |")
    p("|---|---|---|")
    for label, cert in (("TLS (all but the certificate)", False), ("certificate (same test file for both)", True)):
        ct, cs = counts(tb, cert), counts(sun, cert)
        p(f"| {label} | " + ", ".join(f"{k} {v}" for k, v in ct.items()) + " | "
          + ", ".join(f"{k} {v}" for k, v in cs.items()) + " |")
    p("")

    bad = [(i, f) for i, f in sorted(tb.items()) if is_core(i) and flagged(f)]
    other = sorted(i for i in set(tb) | set(sun)
                   if not is_core(i) and (flagged(tb.get(i, {"severity": "OK", "finding": ""}))
                                          or flagged(sun.get(i, {"severity": "OK", "finding": ""}))))
    worse = [(i, tb[i], sun.get(i)) for i in sorted(tb)
             if RANK.get(tb[i]["severity"], 0) >= 1
             and RANK.get(tb[i]["severity"], 0) > RANK.get((sun.get(i) or {}).get("severity", "OK"), 0)]
    better = [(i, tb.get(i), sun[i]) for i in sorted(sun)
              if RANK.get(sun[i]["severity"], 0) >= 1
              and RANK.get(sun[i]["severity"], 0) > RANK.get((tb.get(i) or {}).get("severity", "OK"), 0)]
    p("## Verdict\n")
    if bad:
        rc |= 1
        p("- **tlsbridge has findings of MEDIUM or above (or VULNERABLE):**")
        for i, f in bad:
            p(f"  - {i}: {cell(f)}")
    else:
        p("- tlsbridge: no MEDIUM/HIGH/CRITICAL and no VULNERABLE finding in protocols, ciphers, forward "
          "secrecy or vulnerabilities.")
    low = [(i, f) for i, f in sorted(tb.items()) if is_core(i) and RANK.get(f["severity"], 0) == 1]
    if low:
        rc |= 8
        p("- **tlsbridge has LOW findings in protocols, ciphers, forward secrecy or vulnerabilities:**")
        for i, f in low:
            p(f"  - {i}: {cell(f)}")
    else:
        p("- tlsbridge: every protocol, cipher, forward-secrecy and vulnerability finding is OK or INFO.")
    if worse:
        rc |= 2
        p("- **tlsbridge is more severe than SunJSSE on:**")
        for i, x, y in worse:
            p(f"  - {i}: tlsbridge {cell(x)} / SunJSSE {cell(y)}")
    else:
        p("- tlsbridge is nowhere more severe than SunJSSE (every finding id compared).")
    if better:
        p("- SunJSSE is more severe than tlsbridge on:")
        for i, x, y in better:
            p(f"  - {i}: SunJSSE {cell(y)} / tlsbridge {cell(x)}")
    if other:
        p("- MEDIUM or above outside the TLS stack's choices (the same for both servers unless shown "
          "otherwise above):")
        for i in other:
            p(f"  - {i}: tlsbridge {cell(tb.get(i))} / SunJSSE {cell(sun.get(i))}")
        if "cipher_order" in other:
            p("  - cipher_order: Tomcat's `honorCipherOrder` defaults to false, so both servers let the client "
              "choose; testssl 3.0 rates that HIGH whatever is offered. With only AEAD suites offered "
              "(tlsbridge) every choice is strong, which is why Mozilla's TLS guidelines leave the choice "
              "to the client; `honorCipherOrder=\"true\"` turns server order on for either.")
        if "cert_revocation" in other:
            p("  - cert_revocation: the test certificate, made by the script, names no CRL or OCSP URI.")
        if "security_headers" in other:
            p("  - security_headers: the benchmark servlet sets no HTTP security headers; the application's "
              "business, not the TLS provider's.")
    warns = sorted(i for i, f in tb.items() if f["severity"] == "WARN")
    warns_s = sorted(i for i, f in sun.items() if f["severity"] == "WARN")
    if warns or warns_s:
        p(f"- scanner warnings (WARN, not findings): tlsbridge {', '.join(warns) or 'none'}; "
          f"SunJSSE {', '.join(warns_s) or 'none'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
