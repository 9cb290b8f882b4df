"""Server variants. Each knows whether it can run in this build (and says
why not), how to start on 127.0.0.1 pinned to the server CPU for a given
suite, and how to tell what it negotiated."""

import glob
import json
import os
import re
import subprocess

import procs
import verify
from rules import PRIMARY

# The same flags for every Java server (JDK 25 adds only what it needs to
# allow native access without warnings).
JVM_FLAGS = ["-Xms512m", "-Xmx512m", "-XX:+UseParallelGC", "-Xss1m", "-Djava.net.preferIPv4Stack=true"]
JDK25_EXTRA = ["--enable-native-access=ALL-UNNAMED"]


class Ctx:
    """Paths and tools shared by every variant in a run."""

    def __init__(self, root, workdir, pki_dir, java17, java25, tlsbridge_jar):
        self.root = root
        self.workdir = workdir
        self.pki = pki_dir
        self.java = {"17": java17, "25": java25}
        self.tlsbridge_jar = tlsbridge_jar
        self.server_cp = None
        self.ffm_jar = None
        st = os.path.join(root, "bench", "server", "target")
        if os.path.exists(os.path.join(st, "classpath.txt")):
            self.server_cp = os.path.join(st, "classes") + ":" + self.local_cp(open(os.path.join(st, "classpath.txt")).read())
        self.spring_cp = None
        sp = os.path.join(root, "bench", "spring", "target")
        if os.path.exists(os.path.join(sp, "classpath.txt")):
            self.spring_cp = os.path.join(sp, "classes") + ":" + self.local_cp(open(os.path.join(sp, "classpath.txt")).read())
        # bench/netty: the Netty 4.1 server, a class path of its own
        self.netty_cp = None
        nt = os.path.join(root, "bench", "netty", "target")
        if os.path.exists(os.path.join(nt, "classpath.txt")):
            self.netty_cp = os.path.join(nt, "classes") + ":" + self.local_cp(open(os.path.join(nt, "classpath.txt")).read())
        ffm = glob.glob(os.path.join(st, "ffm", "*", "lib", "tomcat-coyote-ffm.jar"))
        self.ffm_jar = ffm[0] if ffm else None
        self._bss = None
        self._jss = None

    def local_cp(self, cp):
        """A Maven class path with the tlsbridge jar of ~/.m2 replaced by this
        tree's own: ~/.m2 is shared with every other checkout on the machine,
        and a later `mvn install` elsewhere must not change what is measured."""
        out = []
        for e in cp.strip().split(":"):
            if self.tlsbridge_jar and re.search(r"/org/tlsbridge/tlsbridge/[^/]+/tlsbridge-[^/]+\.jar$", e):
                e = self.tlsbridge_jar
            out.append(e)
        return ":".join(out)

    def kept_native_libs(self):
        """JVM options that keep netty-tcnative's and Conscrypt's native
        libraries on disk, in the run's work directory: both unpack theirs
        to a temporary file and delete it once loaded, and perf cannot name a
        symbol in a deleted file, so a peer's profile said only "[unknown]"
        where BoringSSL spends its time. (ACCP deletes its library whatever
        it is told: its symbols stay unnamed.)"""
        d = os.path.join(self.workdir, "native-libs")
        os.makedirs(d, exist_ok=True)
        return [f"-Dio.netty.native.workdir={d}", "-Dio.netty.native.deleteLibAfterLoading=false",
                f"-Dorg.conscrypt.native.workdir={d}", "-Dorg.conscrypt.native.deleteLibAfterLoading=false"]

    def java_cmd(self, jdk):
        j = self.java.get(jdk)
        return [j] + JVM_FLAGS + (JDK25_EXTRA if jdk == "25" else [])

    def log(self, name):
        d = os.path.join(self.workdir, "logs")
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, name + ".log")


class Handle:
    """A running server."""
    # extra environment of the load generators that drive it (a client-side
    # suite pin, client_tls13_pin), or None
    client_env = None

    def __init__(self, variant, proc, port, tls, cmd):
        self.variant = variant
        self.proc = proc
        self.port = port
        self.tls = tls
        self.cmd = cmd
        self.pids = procs.tree(proc.pid)

    @property
    def url_base(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def cpu(self):
        return procs.cpu_seconds(self.pids)

    def jit(self):
        """A JVM server's compiler threads (procs.jit_threads); None without a JIT."""
        return procs.jit_threads(self.pids) if self.variant.jdk else None

    def snapshot(self):
        return None

    def verification(self, before, suite):
        return verify.client_check(self.port, suite) if self.tls else verify.judge({"plain -": 1}, suite, "plain")

    def stop(self):
        self.proc.stop()


class Variant:
    server = "?"
    provider = "?"
    jdk = None
    tls = True
    modes = ("keepalive", "newconn", "resumed")
    in_quick = True  # part of --quick unless named with --variants
    sizes = None     # body sizes it can serve (None: any)

    def __init__(self, name, note=""):
        self.name = name
        self.note = note

    def available(self, ctx):
        return True, ""

    def describe(self):
        return {"server": self.server, "provider": self.provider, "jvm": self.jdk, "tls": self.tls,
                "note": self.note}


# ---------------------------------------------------------------- Tomcat
class TomcatHandle(Handle):
    tls_library = None  # tlsbridge servers: {"openssl", "library", "flavour"} as /_stats last said
    peer_provider = None  # the peers' proof of the provider that serves (BenchServer's PeerProviders)

    def snapshot(self):
        try:
            j = verify.fetch_https_json(self.port, "/_stats", tls=self.tls)
            if j.get("tls_library"):
                self.tls_library = dict(j["tls_library"], flavour=flavour_of(j["tls_library"].get("library")))
            if j.get("peer_provider"):
                self.peer_provider = j["peer_provider"]
            return j["negotiated"]
        except (OSError, ValueError, KeyError) as e:
            return {"error": str(e)}

    def verification(self, before, suite):
        after = self.snapshot()
        if "error" in (before or {}) or "error" in after:
            v = verify.judge({}, suite, "server (Tomcat /_stats)")
            v["error"] = (before or {}).get("error") or after.get("error")
            return v
        v = verify.judge(verify.diff_counts(before or {}, after), suite, "server (Tomcat /_stats)")
        if self.variant.peer:
            v["provider"] = self.peer_provider
            if not self.peer_provider:
                v["ok"] = False
                v["error"] = f"the server did not say that {self.variant.provider} serves it"
        if self.client_env:
            v["client_pin"] = "the load generator's OpenSSL offers only " + suite.openssl
        if self.tls_library:
            # the cell's proof of the OpenSSL that served it, asked of the
            # server at the end of the cell
            v["tls_library"] = self.tls_library
            if self.variant.flavour and self.tls_library["flavour"] != self.variant.flavour:
                v["ok"] = False
                v["error"] = f"asked for the {self.variant.flavour} OpenSSL, served by {self.tls_library}"
        return v


def flavour_of(library):
    """The tlsbridge jar's library file names (NativeLibrary.candidates) ->
    its OpenSSL flavour."""
    base = os.path.basename(library or "")
    if "bundled" in base:
        return "bundled"
    if "system4" in base:
        return "system"
    return "system" if base.startswith("libtlsbridge") else "unknown"


class Tomcat(Variant):
    server = "Tomcat NIO"

    def __init__(self, name, impl, provider, jdk="17", direct=False, tls=True, note="", in_quick=True, jvm_extra=(),
                 flavour=None, peer=False, pins_tls13=True):
        super().__init__(name, note)
        self.impl, self.provider, self.jdk, self.direct, self.tls = impl, provider, jdk, direct, tls
        # peer: another project's provider (PEERS), proven by the server;
        # pins_tls13=False: the server cannot be given a TLS 1.3 suite list,
        # so the load generator offers only the cell's suite instead
        self.peer, self.pins_tls13 = peer, pins_tls13
        self.in_quick = in_quick
        self.jvm_extra = list(jvm_extra)
        # the OpenSSL flavour asked for (tlsbridge variants); the one loaded
        # is what the server reports (TomcatHandle.tls_library)
        self.flavour = flavour or ("bundled" if impl.startswith("tlsbridge") else None)

    def available(self, ctx):
        if not ctx.server_cp:
            return False, "bench/server is not built"
        if not ctx.java.get(self.jdk):
            return False, f"no JDK {self.jdk} on this machine"
        if self.impl == "openssl-ffm" and not ctx.ffm_jar:
            return False, "tomcat-coyote-ffm.jar was not unpacked from the Tomcat distribution"
        if self.impl == "tlsbridge":
            # Issue 4's SSLImplementation; without it the tlsbridge-jsse
            # variant (provider first under JSSEImplementation) still runs.
            jar = ctx.tlsbridge_jar
            names = subprocess.run(["unzip", "-Z1", jar], capture_output=True, text=True).stdout if jar else ""
            if "org/tlsbridge/tomcat/TlsBridgeImplementation.class" not in names:
                return False, ("org.tlsbridge.tomcat.TlsBridgeImplementation is not in this build "
                               "(issue 4 not merged yet)")
        return True, ""

    def describe(self):
        d = super().describe()
        d.update({"impl": self.impl, "direct_ssl_buffers": self.direct})
        if self.flavour:
            d["openssl_flavour"] = self.flavour
        return d

    main = "org.tlsbridge.bench.server.BenchServer"

    def classpath(self, ctx):
        return ctx.server_cp + (":" + ctx.ffm_jar if self.impl == "openssl-ffm" else "")

    def start(self, ctx, suite, jvm_extra=(), tag=None, extra_args=()):
        """jvm_extra, tag: JVM options and a log name of a server started
        more than once per suite (cluster.py's nodes, pq.py's servers);
        extra_args: more BenchServer options (the PQ cells' --groups)."""
        cp = self.classpath(ctx)
        args = ["--impl", self.impl, "--port", "0"] + list(extra_args)
        client_env = None
        if self.tls:
            args += ["--cert", os.path.join(ctx.pki, f"{suite.cert}.crt"),
                     "--key", os.path.join(ctx.pki, f"{suite.cert}.pk8.pem"),
                     "--protocols", suite.protocol, "--direct", "true" if self.direct else "false"]
            if self.pins_tls13 or suite.protocol != "TLSv1.3":
                args += ["--ciphers", suite.openssl]
            else:
                client_env = client_tls13_pin(ctx, suite)
        keep = ctx.kept_native_libs() if self.impl == "conscrypt" else []
        cmd = procs.pinned(procs.SERVER_CPU, ctx.java_cmd(self.jdk) + self.jvm_extra + list(jvm_extra) + keep +
                           ["-cp", cp, self.main] + args)
        p = procs.Proc(cmd, ctx.log(tag or f"{self.name}-{suite.key}"))
        line = p.wait_line(("BENCH-LISTENING", "BENCH-UNAVAILABLE", "BENCH-FAILED"), 90)
        if not line or not line.startswith("BENCH-LISTENING"):
            out = p.output()
            p.stop()
            raise StartError(line or ("no listening line; output: " + out[-1500:]))
        port = int(line.split()[1])
        h = TomcatHandle(self, p, port, self.tls, cmd)
        h.client_env = client_env
        return h


def wildfly_libssl():
    """wildfly-openssl looks for an unversioned libssl.so (a -dev package's
    link) unless told the files: the system's OpenSSL 3, by path."""
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"):
        ssl, crypto = os.path.join(d, "libssl.so.3"), os.path.join(d, "libcrypto.so.3")
        if os.path.exists(ssl) and os.path.exists(crypto):
            return [f"-Dorg.wildfly.openssl.path.ssl={ssl}", f"-Dorg.wildfly.openssl.path.crypto={crypto}"]
    return []


def client_tls13_pin(ctx, suite):
    """wrk and siege cannot be told a TLS 1.3 suite, but their OpenSSL reads
    its configuration file at start: one offering only the cell's suite
    makes a server on its defaults negotiate what the others are pinned to
    (the server still says what it negotiated)."""
    path = os.path.join(ctx.workdir, f"openssl-client-{suite.key}.cnf")
    with open(path, "w") as f:
        f.write("openssl_conf = tb_client\n[tb_client]\nssl_conf = tb_ssl\n[tb_ssl]\n"
                "system_default = tb_system\n[tb_system]\n"
                f"MinProtocol = TLSv1.3\nCiphersuites = {suite.openssl}\n")
    return {"OPENSSL_CONF": path}


class SpringBootTomcat(Tomcat):
    """bench/spring: Spring Boot 3.5's embedded Tomcat serving the same
    servlet under the same load, TLS configured by server.ssl.* only; with
    tlsbridge, the jar's auto-configuration picks TlsBridgeImplementation
    (the server checks it did). Keep-alive 1 KiB and full handshakes."""
    server = "Spring Boot 3.5 + Tomcat NIO"
    main = "org.tlsbridge.bench.server.SpringBenchServer"
    modes = ("keepalive", "newconn")
    sizes = (1024,)
    start_s = 12.0  # seconds to start on one pinned core of the 2-vCPU machine (plan.estimate_seconds)

    def __init__(self, name, impl, provider, note=""):
        # a Spring Boot start takes several seconds: not in --quick (its 5 minutes)
        super().__init__(name, impl, provider, note=note, in_quick=False)

    def classpath(self, ctx):
        return ctx.spring_cp

    def available(self, ctx):
        if not ctx.spring_cp:
            return False, "bench/spring is not built"
        if self.impl == "tlsbridge":
            names = subprocess.run(["unzip", "-Z1", ctx.tlsbridge_jar], capture_output=True, text=True).stdout \
                if ctx.tlsbridge_jar else ""
            if "org/tlsbridge/spring/TlsBridgeAutoConfiguration.class" not in names:
                return False, "org.tlsbridge.spring (Spring Boot auto-configuration) is not in this build"
        return True, ""


class StartError(Exception):
    pass


# ---------------------------------------------------------------- nginx
NGINX_CONF = """
daemon off;
master_process on;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 8192; use epoll; multi_accept on; }}
http {{
    # one line per connection (its first request): proves protocol/suite and
    # resumption without a per-request log write on keep-alive runs
    map $connection_requests $tb_first {{ 1 1; default 0; }}
    log_format tb '$ssl_protocol $ssl_cipher $ssl_session_reused $ssl_curve';
    access_log {d}/negotiated.log tb if=$tb_first;
    keepalive_requests 1000000000;
    keepalive_timeout 60s;
    # sendfile is off for both TLS and plain so the plain floor is the same
    # code path minus TLS (TLS cannot sendfile without kTLS)
    sendfile off;
    tcp_nodelay on;
    open_file_cache max=64 inactive=600s;
    open_file_cache_valid 600s;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port}{ssl} backlog=1024;
        root {d}/www;
{tls}
        location / {{ }}
    }}
}}
"""


class NginxHandle(Handle):
    def __init__(self, variant, proc, port, tls, cmd, logfile):
        super().__init__(variant, proc, port, tls, cmd)
        self.logfile = logfile

    def _lines(self):
        try:
            with open(self.logfile) as f:
                return f.read().splitlines()
        except OSError:
            return []

    def snapshot(self):
        return len(self._lines())

    def stop(self):
        super().stop()
        import shutil
        shutil.copy(os.path.join(self.tmpdir, "nginx.conf"), self.proc.log_path[:-4] + ".conf")
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def verification(self, before, suite):
        if not self.tls:
            return verify.judge({"plain -": 1}, suite, "plain")
        counts, reused = {}, 0
        new = self._lines()[before or 0:]
        for ln in new:
            parts = ln.split()
            if len(parts) >= 2:
                # $ssl_curve: the group (OpenSSL's name); "" or "-" when none
                k = f"{parts[0]} {parts[1]}" + (f" {parts[3]}" if len(parts) > 3 and parts[3] not in ("", "-") else "")
                counts[k] = counts.get(k, 0) + 1
                reused += len(parts) > 2 and parts[2] == "r"
        v = verify.judge(counts, suite, "server (nginx $ssl_protocol $ssl_cipher, first request per connection)")
        v["connections"] = len(new)
        v["resumed"] = reused
        return v


class Nginx(Variant):
    server = "nginx"
    jdk = None

    def __init__(self, name, tls=True, note=""):
        super().__init__(name, note)
        self.tls = tls
        self.provider = "OpenSSL (nginx)" if tls else "none (plain HTTP)"

    def available(self, ctx):
        if not os.path.exists("/usr/sbin/nginx"):
            return False, "nginx is not installed"
        return True, ""

    def start(self, ctx, suite, sizes=(1024,)):
        # nginx's workers run as www-data: its files live in a 0755
        # directory of their own, not under a results dir that may be 0700
        import tempfile
        d = tempfile.mkdtemp(prefix=f"tb-nginx-{self.name}-{suite.key}-")
        os.chmod(d, 0o755)
        os.makedirs(os.path.join(d, "www"), exist_ok=True)
        os.chmod(os.path.join(d, "www"), 0o755)
        for n in sizes:
            with open(os.path.join(d, "www", str(n)), "wb") as f:
                f.write(b"a" * n)
        port = procs.free_port()
        tls = ""
        if self.tls:
            tls = (f"        ssl_certificate {ctx.pki}/{suite.cert}.crt;\n"
                   f"        ssl_certificate_key {ctx.pki}/{suite.cert}.pk8.pem;\n"
                   f"        ssl_protocols {suite.protocol};\n"
                   f"        ssl_prefer_server_ciphers on;\n")
            if suite.protocol == "TLSv1.3":
                tls += f"        ssl_conf_command Ciphersuites {suite.openssl};\n"
            else:
                tls += f"        ssl_ciphers {suite.openssl};\n"
            tls += "        ssl_session_cache shared:tb:10m;\n        ssl_session_tickets on;\n"
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(d=d, port=port, ssl=" ssl" if self.tls else "", tls=tls))
        cmd = procs.pinned(procs.SERVER_CPU, ["/usr/sbin/nginx", "-p", d, "-c", conf])
        p = procs.Proc(cmd, ctx.log(f"{self.name}-{suite.key}"))
        if not procs.wait_port(port, 20, p.p):
            out = p.output()
            p.stop()
            raise StartError("nginx did not listen: " + out[-1500:])
        import time
        time.sleep(0.3)  # let the master fork its worker before we list the tree
        h = NginxHandle(self, p, port, self.tls, cmd, os.path.join(d, "negotiated.log"))
        h.tmpdir = d
        return h


# ------------------------------------------------- socket servers (BSS, JSS)
class SocketHandle(Handle):
    """A thread-per-connection server. If it prints
    'NEGOTIATED <protocol> <suite>' lines (one per connection or a sample),
    those are the server-side proof; otherwise a client handshake is."""

    def _counts(self):
        counts = {}
        for m in re.finditer(r"^NEGOTIATED (\S+) (\S+)(?: (\S+))?$", self.proc.output(), re.M):
            k = " ".join(g for g in m.groups() if g)
            counts[k] = counts.get(k, 0) + 1
        return counts

    def snapshot(self):
        return self._counts()

    def verification(self, before, suite):
        after = self._counts()
        if after:
            return verify.judge(verify.diff_counts(before or {}, after), suite,
                                f"server ({self.variant.server} NEGOTIATED lines)")
        return verify.client_check(self.port, suite)


def _javac(ctx, jdk, srcs, cp, out):
    os.makedirs(out, exist_ok=True)
    javac = os.path.join(os.path.dirname(ctx.java[jdk]), "javac")
    r = subprocess.run([javac, "-nowarn", "-d", out, "-cp", cp] + srcs, capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr)[-1500:]


def find_bss(ctx):
    """bench/sslsocket's BenchmarkSSLSocket (default package, one file),
    compiled here against this tree's tlsbridge jar."""
    if ctx._bss is not None:
        return ctx._bss
    src = os.path.join(ctx.root, "bench", "sslsocket", "src", "BenchmarkSSLSocket.java")
    if not os.path.exists(src):
        ctx._bss = (None, None, "bench/sslsocket/src/BenchmarkSSLSocket.java is missing")
        return ctx._bss
    out = os.path.join(ctx.workdir, "classes", "bss")
    ok, msg = _javac(ctx, "17", [src], ctx.tlsbridge_jar, out)
    ctx._bss = ("BenchmarkSSLSocket", out + ":" + ctx.tlsbridge_jar, None) if ok else (None, None, "javac failed: " + msg)
    return ctx._bss


def _socket_start(self, ctx, suite, argv, extra_jvm, cp, fqcn, listening=None, handle=SocketHandle):
    """listening: the prefix of the line in which the server names the port
    it bound (port 0 given); None: a free port is chosen here."""
    port = 0 if listening else procs.free_port()
    cmd = procs.pinned(procs.SERVER_CPU, ctx.java_cmd(self.jdk) + extra_jvm + ["-cp", cp, fqcn]
                       + [a.replace("{port}", str(port)) for a in argv])
    p = procs.Proc(cmd, ctx.log(f"{self.name}-{suite.key}"))
    if listening:
        line = p.wait_line((listening,), 60)
        port = int(line.split()[2]) if line else 0
    if not port or not procs.wait_port(port, 60, p.p):
        out = p.output()
        p.stop()
        raise StartError(out[-1500:] or "did not listen")
    return handle(self, p, port, True, cmd)


class BenchmarkSSLSocket(Variant):
    """bench/sslsocket: JSS's benchmark command line, a thread per
    connection, real HTTP request parsing and keep-alive when asked: siege
    (a full handshake per request, as in JSS's table) and wrk keep-alive."""
    server = "BenchmarkSSLSocket"
    jdk = "17"
    modes = ("keepalive", "newconn")
    sizes = (1024,)  # the body size is fixed when the server starts

    def __init__(self, name, impl, provider, note="", jdk="17", virtual=False):
        super().__init__(name, note)
        self.impl, self.provider, self.jdk, self.virtual = impl, provider, jdk, virtual
        # the virtual-thread cells and their platform-thread baseline on the
        # same JDK are full-run cells: the quick run keeps its 5 minutes
        self.in_quick = jdk == "17" and not virtual

    def available(self, ctx):
        if not ctx.java.get(self.jdk):
            return False, f"no JDK {self.jdk} on this machine (virtual threads need 21 or later)"
        fqcn, cp, why = find_bss(ctx)
        return (True, "") if fqcn else (False, why)

    def start(self, ctx, suite, size=1024):
        fqcn, cp, _ = find_bss(ctx)
        # JSS's command line has no suite option: pin through the JDK's
        # server properties (verified per cell like everything else)
        pins = [f"-Djdk.tls.server.protocols={suite.protocol}", f"-Djdk.tls.server.cipherSuites={suite.iana}"]
        # binds 127.0.0.1 unless told otherwise; said explicitly all the same
        argv = ["--bind", "127.0.0.1"] + (["--virtual"] if self.virtual else []) + [
            self.impl, os.path.join(ctx.pki, f"{suite.cert}.p12"), "m1oZilla", "{port}", str(size)]
        return _socket_start(self, ctx, suite, argv, pins, cp, fqcn, listening="LISTENING")


# ------------------------------------------------------------------ Netty
class NettyHandle(SocketHandle):
    """bench/netty's server: NEGOTIATED lines as BenchmarkSSLSocket prints
    them, and the engine that serves (BENCH-PROVIDER, checked by the server
    before it listens) in every cell's verification."""

    def verification(self, before, suite):
        v = super().verification(before, suite)
        m = re.search(r"^BENCH-PROVIDER (.+)$", self.proc.output(), re.M)
        try:
            v["provider"] = json.loads(m.group(1)) if m else None
        except ValueError:
            v["provider"] = None
        wrong = self.variant.wrong_engine(v["provider"])
        if wrong:
            v["ok"] = False
            v["error"] = wrong
        if self.client_env:
            v["client_pin"] = "the load generator's OpenSSL offers only " + suite.openssl
        return v


class Netty(Variant):
    """bench/netty: a Netty 4.1 HTTP/1.1 server on NIO, GET /N returning the
    same N bytes of 'a' as the Tomcat servlet, the TLS engine chosen by
    name: Netty's OpenSSL engine (netty-tcnative, BoringSSL), or its JDK
    mode with the TLSBridge provider or SunJSSE."""
    server = "Netty 4.1 HTTP/1.1"
    jdk = "17"
    in_quick = False  # three more JVMs to warm up: the quick run keeps its 5 minutes
    main = "org.tlsbridge.bench.netty.NettyBenchServer"

    def __init__(self, name, impl, provider, note="", pins_tls13=True):
        super().__init__(name, note)
        self.impl, self.provider, self.pins_tls13 = impl, provider, pins_tls13

    # what the server's BENCH-PROVIDER line must say for each --impl: the
    # provider of the SSLContext (or netty-tcnative) and the engine's class
    EXPECT = {"openssl": ("netty-tcnative", "io.netty.handler.ssl.", "OpenSsl"),
              "tlsbridge": ("TLSBridge", "org.tlsbridge.", ""),
              "jdk": ("SunJSSE", "sun.security.ssl.", "")}

    def wrong_engine(self, said):
        """Why the server's own account of its engine is not this variant's
        (None when it is): a Netty cell is only worth its name if the engine
        that served it is the one named."""
        if not said:
            return f"the server did not say that {self.provider} serves it"
        provider, package, part = self.EXPECT[self.impl]
        engine = said.get("engine") or ""
        if said.get("provider") != provider or not engine.startswith(package) or part not in engine:
            return f"served by {said.get('provider')} ({engine}), not {provider}"
        if self.impl == "openssl" and not (said.get("library") or "").startswith("BoringSSL"):
            return f"netty-tcnative runs {said.get('library')!r}, not BoringSSL"
        return None

    def available(self, ctx):
        if not ctx.netty_cp:
            return False, "bench/netty is not built"
        return True, ""

    def start(self, ctx, suite, size=None):
        args = ["--impl", self.impl, "--port", "0", "--cert", os.path.join(ctx.pki, f"{suite.cert}.crt"),
                "--key", os.path.join(ctx.pki, f"{suite.cert}.pk8.pem"), "--protocols", suite.protocol]
        client_env = None
        if self.pins_tls13 or suite.protocol != "TLSv1.3":
            args += ["--ciphers", suite.iana]
        else:
            client_env = client_tls13_pin(ctx, suite)
        keep = ctx.kept_native_libs() if self.impl == "openssl" else []
        h = _socket_start(self, ctx, suite, args, keep, ctx.netty_cp, self.main, listening="LISTENING",
                          handle=NettyHandle)
        h.client_env = client_env
        return h


JSS_CP = ["/usr/share/java/jss.jar", "/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar",
          "/usr/share/java/commons-lang3.jar"]


def find_jss(ctx):
    if ctx._jss is not None:
        return ctx._jss
    missing = [j for j in JSS_CP if not os.path.exists(j)]
    if missing:
        ctx._jss = (None, "missing " + ", ".join(missing) + " (apt: libjss-java libslf4j-java)")
        return ctx._jss
    srcs = glob.glob(os.path.join(ctx.root, "bench", "jss", "src", "**", "*.java"), recursive=True)
    out = os.path.join(ctx.workdir, "classes", "jss")
    ok, msg = _javac(ctx, "17", srcs, ":".join(JSS_CP), out)
    ctx._jss = (out + ":" + ":".join(JSS_CP), None) if ok else (None, "javac failed: " + msg)
    return ctx._jss


class Jss(Variant):
    server = "BenchmarkSSLSocket (JSS)"
    provider = "NSS (Mozilla JSS)"
    jdk = "17"
    # one response per connection, as in JSS's own benchmark and table
    modes = ("newconn",)
    sizes = (1024,)

    def __init__(self, name, impl, note=""):
        super().__init__(name, note)
        self.impl = impl

    def available(self, ctx):
        cp, why = find_jss(ctx)
        if not cp:
            return False, why
        if not os.path.exists("/usr/bin/certutil"):
            return False, "certutil is missing (apt: libnss3-tools)"
        return True, ""

    def start(self, ctx, suite, size=1024):
        import pki
        cp, _ = find_jss(ctx)
        db = pki.nss_db(ctx.pki)
        nick = "Server_RSA" if suite.cert == "rsa" else "Server_EC"
        props = [f"-Dtb.nssdb={db}", f"-Dtb.protocol={suite.protocol}", f"-Dtb.suite={suite.iana}",
                 "-Djava.library.path=/usr/lib/jss"]
        argv = [self.impl, nick, "{port}", str(size)]
        return _socket_start(self, ctx, suite, argv, props, cp, "org.tlsbridge.bench.jss.JssBenchmarkSSLSocket")


def all_variants():
    return [
        Tomcat("tomcat-plain", "plain", "none (plain HTTP)", tls=False, note="plain HTTP: the baseline of Tomcat's TLS tax"),
        Tomcat("tomcat-sunjsse", "jsse", "SunJSSE"),
        Tomcat("tomcat-tlsbridge", "tlsbridge", "TLSBridge", note="TlsBridgeImplementation, heap network buffers"),
        Tomcat("tomcat-tlsbridge-system", "tlsbridge", "TLSBridge", in_quick=False, flavour="system",
               jvm_extra=["-Dtlsbridge.openssl=system"],
               note="TlsBridgeImplementation (heap buffers) on the system's libssl (-Dtlsbridge.openssl=system); "
                    "the OpenSSL flavour cells only"),
        Tomcat("tomcat-tlsbridge-direct", "tlsbridge", "TLSBridge", direct=True,
               note="TlsBridgeImplementation, socket.directSslBuffer=true"),
        Tomcat("tomcat-tlsbridge-jsse", "tlsbridge-jsse", "TLSBridge", in_quick=False,
               note="Tomcat's JSSEImplementation with TLSBridge as the first provider (heap buffers)"),
        Tomcat("tomcat-conscrypt", "conscrypt", "Conscrypt", peer=True, pins_tls13=False,
               note="Conscrypt 2.5.2 (BoringSSL) as the first provider under Tomcat's JSSEImplementation; it refuses "
                    "a TLS 1.3 suite list through Tomcat, so it runs on its defaults and the load generator offers "
                    "only the cell's suite"),
        Tomcat("tomcat-sunjsse-accp", "jsse-accp", "SunJSSE + ACCP", peer=True,
               note="SunJSSE with Amazon Corretto Crypto Provider 2.4.1 (AWS-LC) as the first provider: its AES-GCM, "
                    "HMAC, digests, ECDH and RSA signatures; X25519 stays on SunEC (ACCP 2.4.1 has none)"),
        Tomcat("tomcat-wildfly-openssl", "wildfly-openssl", "wildfly-openssl", peer=True, in_quick=False,
               jvm_extra=wildfly_libssl(),
               note="wildfly-openssl 2.2.5 (its libwfssl over the system's OpenSSL 3) as the first provider under "
                    "Tomcat's JSSEImplementation"),
        Tomcat("tomcat-openssl-ffm", "openssl-ffm", "OpenSSL (Tomcat FFM)", jdk="25",
               note="Tomcat's own OpenSSL engine over FFM; runs on Temurin 25"),
        Tomcat("tomcat-sunjsse-25", "jsse", "SunJSSE", jdk="25", in_quick=False, note="same-JVM comparison for tomcat-openssl-ffm"),
        Tomcat("tomcat-tlsbridge-25", "tlsbridge", "TLSBridge", jdk="25", in_quick=False,
               note="TlsBridgeImplementation (heap buffers) on Temurin 25: same JVM as tomcat-openssl-ffm"),
        SpringBootTomcat("springboot-sunjsse", "jsse", "SunJSSE", note="server.ssl.*, tlsbridge.enabled=false"),
        SpringBootTomcat("springboot-tlsbridge", "tlsbridge", "TLSBridge",
                         note="server.ssl.*, the tlsbridge jar's auto-configuration (heap buffers)"),
        Nginx("nginx-plain", tls=False, note="plain HTTP: the baseline of nginx's TLS tax"),
        Nginx("nginx"),
        BenchmarkSSLSocket("bss-tlsbridge", "TLSBridge.SSLSocket", "TLSBridge"),
        BenchmarkSSLSocket("bss-sunjsse", "SunJSSE.SSLSocket", "SunJSSE"),
        BenchmarkSSLSocket("bss-tlsbridge-25", "TLSBridge.SSLSocket", "TLSBridge", jdk="25",
                           note="a platform thread per connection on Temurin 25: the baseline of the virtual-thread cells"),
        BenchmarkSSLSocket("bss-tlsbridge-vt", "TLSBridge.SSLSocket", "TLSBridge", jdk="25", virtual=True,
                           note="a virtual thread per connection (Temurin 25): tlsbridge's sockets park while they wait"),
        BenchmarkSSLSocket("bss-sunjsse-vt", "SunJSSE.SSLSocket", "SunJSSE", jdk="25", virtual=True,
                           note="a virtual thread per connection (Temurin 25)"),
        Jss("jss-legacy", "JSS.legacy", note="JSS's NSS-based org.mozilla.jss.ssl.SSLSocket, as in its own table"),
        Netty("netty-openssl", "openssl", "OpenSSL (Netty, BoringSSL)", pins_tls13=False,
              note="Netty's OpenSSL engine (SslProvider.OPENSSL, netty-tcnative-boringssl-static); BoringSSL takes no "
                   "TLS 1.3 suite list, so it runs on its defaults and the load generator offers only the cell's suite"),
        Netty("netty-tlsbridge", "tlsbridge", "TLSBridge",
              note="Netty's JDK engine mode with SslContextBuilder.sslContextProvider(TLSBridge)"),
        Netty("netty-jdk", "jdk", "SunJSSE", note="Netty's JDK engine mode on SunJSSE"),
    ]


# The variants measured on the secondary suites of the full run (every
# variant runs the primary suite, TLS 1.3 AES-128-GCM with RSA-2048): the
# two sides of issue 16's targets (items 1-3) and the floors of the TLS tax.
# Tomcat's FFM engine and JSS serve the primary suite only (no target judges
# them: fits the full run in its time budget, see plan.estimate_seconds).
CORE = {"tomcat-sunjsse", "tomcat-tlsbridge", "tomcat-tlsbridge-direct", "nginx",
        "bss-tlsbridge", "bss-sunjsse", "tomcat-plain", "nginx-plain"}
# Run only when named with --variants: the interim provider-first JSSE path,
# superseded by TlsBridgeImplementation and judged by no target.
OPT_IN = {"tomcat-tlsbridge-jsse"}


# What a Java team would pick instead of tlsbridge (and Netty's JDK mode
# with tlsbridge and SunJSSE beside its OpenSSL engine): the primary suite's
# cells, keep-alive up to 64 KiB (the 1 MiB cell's warm-ups would add
# minutes to the full run for a size dominated by the bulk cipher), and
# new connections with an ECDSA P-256 key (PEER_EC); keep-alive and new
# connection on the primary suite in the quick run.
PEERS = {"tomcat-conscrypt", "tomcat-sunjsse-accp", "tomcat-wildfly-openssl", "netty-openssl", "netty-tlsbridge",
         "netty-jdk"}
PEER_QUICK_MODES = ("keepalive", "newconn")
PEER_MAX_SIZE = 65536
PEER_EC = ("t13-aes128-ec", "newconn")
# the peers without an ECDSA cell, and why (the report's targets say it)
PEER_NO_EC = {
    "tomcat-wildfly-openssl": "wildfly-openssl 2.2.5 takes only RSA and DSA keys from its key manager, so with an "
                              "ECDSA P-256 key it has no certificate to send",
    "netty-jdk": "SunJSSE's ECDSA handshakes are measured in Tomcat and in the bare socket server; in Netty it is "
                 "only netty-tlsbridge's reference, not a peer",
}


def default(all_, quick):
    """The variants a run without --variants measures."""
    return [v for v in all_ if (v.in_quick if quick else v.name not in OPT_IN)]


# The OpenSSL flavour comparison (report "OpenSSL flavours"): its workloads,
# (suite, mode, body size or None for the new-connection size), and the
# variants that run there and nowhere else (FLAVOUR_ONLY) or there beyond
# the primary suite (FLAVOUR_TOO: SunJSSE 25's column).
FLAVOUR_CELLS = (("t13-aes128", "keepalive", 1024), ("t13-aes128", "keepalive", 16384),
                 ("t13-aes128", "keepalive", 65536), ("t13-aes128", "newconn", None),
                 ("t13-aes128-ec", "newconn", None))
FLAVOUR_ONLY = {"tomcat-tlsbridge-system"}
FLAVOUR_TOO = {"tomcat-sunjsse-25"}


def flavour_cell(mode, size, group):
    return any(k == group.suite.key and m == mode and (n is None or n == size) for k, m, n in FLAVOUR_CELLS)


def serves(v, mode, size, group):
    if mode not in v.modes or (v.sizes and size not in v.sizes):
        return False
    if v.name in FLAVOUR_ONLY:
        return flavour_cell(mode, size, group)
    if v.name in PEERS:
        if (group.suite.key, mode) == PEER_EC:
            # the quick run has no such group unless --suites names it
            return v.name not in PEER_NO_EC
        return (group.suite.key == PRIMARY and (mode != "keepalive" or size <= PEER_MAX_SIZE)
                and (not group.quick or mode in PEER_QUICK_MODES))
    return group.all_variants or v.name in CORE or (v.name in FLAVOUR_TOO and flavour_cell(mode, size, group))


# The plain-HTTP floor of each TLS variant (same server, no TLS).
PLAIN_OF = {"Tomcat NIO": "tomcat-plain", "nginx": "nginx-plain"}
