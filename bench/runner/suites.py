"""Cipher-suite configurations: what each server is pinned to, and how the
names that servers report (JSSE, OpenSSL, NSS) map back to one IANA name."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Suite:
    key: str          # short id used on the command line and in results
    protocol: str     # "TLSv1.3" or "TLSv1.2"
    iana: str         # IANA / JSSE name, what every cell is verified against
    openssl: str      # OpenSSL name (nginx, Tomcat's cipher string, siege)
    cert: str         # "rsa" (RSA-2048) or "ec" (ECDSA P-256)

    @property
    def label(self):
        return f"{self.protocol} {self.iana} ({'RSA-2048' if self.cert == 'rsa' else 'ECDSA P-256'})"


def _s(key, proto, iana, openssl, cert):
    return Suite(key, proto, iana, openssl, cert)


SUITES = [
    _s("t13-aes128", "TLSv1.3", "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "rsa"),
    _s("t13-aes256", "TLSv1.3", "TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", "rsa"),
    _s("t13-chacha", "TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", "rsa"),
    _s("t13-aes128-ec", "TLSv1.3", "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "ec"),
    _s("t12-rsa-aes128", "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "rsa"),
    _s("t12-rsa-aes256", "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", "rsa"),
    _s("t12-rsa-chacha", "TLSv1.2", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", "rsa"),
    _s("t12-ec-aes128", "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", "ec"),
    _s("t12-ec-aes256", "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", "ec"),
    _s("t12-ec-chacha", "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "ec"),
]
BY_KEY = {s.key: s for s in SUITES}

# The suite-less configuration of the plain-HTTP floor variants.
PLAIN = Suite("plain", "plain", "-", "-", "-")

_TO_IANA = {}
for _x in SUITES:
    _TO_IANA[_x.openssl] = _x.iana
    _TO_IANA[_x.iana] = _x.iana


def iana(name):
    """Any server's name for a suite -> the IANA name (unknown names pass)."""
    return _TO_IANA.get(name, name)


def norm_protocol(p):
    p = (p or "").strip().split(":")[0]
    return {"TLSv1.3": "TLSv1.3", "TLSv1.2": "TLSv1.2", "TLS1.3": "TLSv1.3", "TLS1.2": "TLSv1.2",
            "TLS 1.3": "TLSv1.3", "TLS 1.2": "TLSv1.2", "": "plain", "-": "plain"}.get(p, p)
