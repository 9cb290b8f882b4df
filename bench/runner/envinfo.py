"""Versions of everything a figure depends on, for the report."""

import os
import platform
import re
import subprocess


def _out(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


def _first(cmd, pat=None):
    s = _out(cmd)
    if not s:
        return None
    if pat:
        m = re.search(pat, s)
        return m.group(1) if m else s.splitlines()[0]
    return s.splitlines()[0]


def jar_version(cp, artifact):
    """The version of a jar on a Maven class path (~/.m2/.../<artifact>-<version>[-<classifier>].jar)."""
    m = re.search(r"/" + re.escape(artifact) + r"/([^/]+)/" + re.escape(artifact) + r"-", cp or "")
    return m.group(1) if m else None


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def collect(ctx, tomcat_version):
    cpu = None
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    dpkg = lambda p: _first(["dpkg-query", "-W", "-f=${Version}", p])  # noqa: E731
    git = _first(["git", "-C", ctx.root, "rev-parse", "--short", "HEAD"])
    return {
        "jdk17": _first([ctx.java["17"], "-version"], r'version "([^"]+)"') if ctx.java.get("17") else None,
        "jdk25": _first([ctx.java["25"], "-version"], r'version "([^"]+)"') if ctx.java.get("25") else None,
        "openssl": _first(["openssl", "version"]),
        "tomcat": tomcat_version,
        "nginx": _first(["/usr/sbin/nginx", "-v"], r"nginx/(\S+)"),
        "siege": _first(["siege", "--version"], r"SIEGE (\S+)"),
        "wrk": _first(["wrk", "-v"], r"wrk (\S+)"),
        "jss": dpkg("libjss-java"),
        "nss": dpkg("libnss3"),
        "jmh": jar_version(_read(os.path.join(ctx.root, "bench", "jmh", "target", "classpath.txt")), "jmh-core"),
        # the peers of bench/server's pom (tomcat-conscrypt, tomcat-sunjsse-accp,
        # tomcat-wildfly-openssl); the JMH engines take the same versions
        # from the parent pom (results.json jmh.versions has theirs)
        "conscrypt": jar_version(ctx.server_cp, "conscrypt-openjdk-uber"),
        "accp": jar_version(ctx.server_cp, "AmazonCorrettoCryptoProvider"),
        "wildfly_openssl": jar_version(ctx.server_cp, "wildfly-openssl"),
        # bench/netty's pom (netty-openssl, netty-tlsbridge, netty-jdk)
        "netty": jar_version(getattr(ctx, "netty_cp", None), "netty-handler"),
        "netty_tcnative": jar_version(getattr(ctx, "netty_cp", None), "netty-tcnative-boringssl-static"),
        "perf": _first(["perf", "--version"], r"perf version (\S+)"),
        "kernel": platform.release(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "tlsbridge_git": git,
        "tlsbridge_jar": ctx.tlsbridge_jar,
        "tlsbridge_probe": getattr(ctx, "probe", None),
    }
