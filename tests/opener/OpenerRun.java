import java.io.ByteArrayInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.Security;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * The capturing half of the opener test: runs tlsbridge against SunJSSE in
 * both roles, over the engine (a layered socket, whose records leave through
 * the engine's buffer BIO) and the native socket (records leave through the
 * socket BIO), for each AEAD suite, with a relay in between that writes each
 * direction's bytes to a file. Both ends send a stream the checker can
 * regenerate (SHA-256 of label and counter); on TLS 1.3 tlsbridge asks for
 * a KeyUpdate before each of its sends, and the SunJSSE peer, given small
 * jdk.tls.keyLimits by the caller, updates and asks for updates often.
 * tlsbridge writes its key log to -Dtlsbridge.keylog. Each connection's
 * files go to OUT/NAME/, with meta.txt saying what the checker needs.
 *
 * With -Dopener.openssl=OPENSSL every suite runs again against openssl
 * s_client/s_server, and with -Dopener.go=GOPEER the TLS 1.3 suites against
 * Go's crypto/tls (tests/opener/gopeer.go), a process per connection, both
 * roles and both BIOs. Neither re-keys on its own, and tlsbridge asks for no
 * KeyUpdate there: every KeyUpdate tlsbridge sends must come from its key
 * limits, which -Dopener.keyLimits=AES_GCM,CHACHA20 (bytes) tells the checker,
 * so it can check each key's bytes. -Dopener.peers=go (a list of sunjsse,
 * openssl, go) runs only those peers.
 *
 *   java -Dtlsbridge.keylog=K [-Dopener.openssl=O] [-Dopener.go=G] [-Dopener.keyLimits=L] \
 *       OpenerRun OUT FLAVOUR rsa.p12 ec.p12 password
 */
public final class OpenerRun {
    /** Write sizes: one byte, odd lengths, exactly one record, one past it, several records. */
    private static final int[] SIZES = {16384, 1, 5000, 16385, 300, 40000, 17, 8192, 65536, 2};
    private static final int ROUNDS = 3;
    private static final String[][] SUITES = {
        {"TLSv1.3", "TLS_AES_128_GCM_SHA256", "rsa"},
        {"TLSv1.3", "TLS_AES_256_GCM_SHA384", "rsa"},
        {"TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "ec"},
        {"TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "rsa"},
        {"TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "rsa"},
        {"TLSv1.2", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "rsa"},
        {"TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ec"},
        {"TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ec"},
        {"TLSv1.2", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ec"},
    };

    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        String flavour = args[1];
        char[] pw = args[4].toCharArray();
        Security.addProvider(new org.tlsbridge.TlsBridgeProvider());
        System.out.println("SEAL " + org.tlsbridge.internal.RecordSealing.describe());
        KeyStore rsa = load(args[2], pw), ec = load(args[3], pw);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("rsa", rsa.getCertificate(rsa.aliases().nextElement()));
        trust.setCertificateEntry("ec", ec.getCertificate(ec.aliases().nextElement()));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        Map<String, String> programs = new HashMap<>();
        for (String peer : new String[] {"go", "openssl"}) {
            String program = System.getProperty("opener." + peer);
            if (program != null) {
                programs.put(peer, program);
            }
        }
        long[] limits = Arrays.stream(System.getProperty("opener.keyLimits", "0,0").split(","))
                .mapToLong(Long::parseLong).toArray();
        Path rsaPem = pem(out.resolve("rsa.pem"), rsa, pw), ecPem = pem(out.resolve("ec.pem"), ec, pw);
        int failed = 0;
        for (String peer : System.getProperty("opener.peers", "sunjsse,go,openssl").split(",")) {
            if (!peer.equals("sunjsse") && !programs.containsKey(peer)) {
                continue;
            }
            for (String role : new String[] {"server", "client"}) {
                for (String bio : new String[] {"socket", "engine"}) {
                    for (String[] s : SUITES) {
                        boolean tls13 = s[0].equals("TLSv1.3");
                        if (peer.equals("go") && !tls13) {
                            continue;
                        }
                        KeyStore ks = s[2].equals("rsa") ? rsa : ec;
                        String name = flavour + (peer.equals("sunjsse") ? "" : "-" + peer) + "-" + role + "-" + bio + "-"
                                + s[1];
                        Path dir = out.resolve(name);
                        Files.createDirectories(dir);
                        try {
                            String facts = peer.equals("sunjsse")
                                    ? connection(dir, name, role, bio, s[0], s[1], context("TLSBridge", ks, pw, tmf),
                                            context("SunJSSE", ks, pw, tmf))
                                    : processConnection(dir, name, peer, role, bio, s[0], s[1],
                                            context("TLSBridge", ks, pw, tmf), programs.get(peer),
                                            s[2].equals("rsa") ? rsaPem : ecPem, limits[s[1].contains("CHACHA20") ? 1 : 0]);
                            System.out.println("OK " + name + " " + facts);
                        } catch (Throwable e) {
                            failed++;
                            System.out.println("FAILED " + name + ": " + e);
                            e.printStackTrace(System.out);
                        }
                    }
                }
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }

    /** The key store's certificate and key as PEM (Go reads no PKCS#12): the file to serve and to trust. */
    private static Path pem(Path file, KeyStore ks, char[] pw) throws Exception {
        String alias = ks.aliases().nextElement();
        Base64.Encoder b64 = Base64.getMimeEncoder(64, new byte[] {'\n'});
        String text = "-----BEGIN CERTIFICATE-----\n" + b64.encodeToString(ks.getCertificate(alias).getEncoded())
                + "\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n"
                + b64.encodeToString(ks.getKey(alias, pw).getEncoded()) + "\n-----END PRIVATE KEY-----\n";
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        return file;
    }

    private static KeyStore load(String path, char[] pw) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(path)) {
            ks.load(in, pw);
        }
        return ks;
    }

    private static SSLContext context(String provider, KeyStore ks, char[] pw, TrustManagerFactory tmf)
            throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
        kmf.init(ks, pw);
        SSLContext c = SSLContext.getInstance("TLS", provider);
        c.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return c;
    }

    /** The deterministic stream: SHA-256(label || counter) blocks, counter big-endian from 0. */
    static byte[] stream(String label, long from, int len) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] out = new byte[len];
        byte[] l = label.getBytes("US-ASCII");
        long block = from / 32;
        int skip = (int) (from % 32), at = 0;
        while (at < len) {
            md.update(l);
            for (int i = 7; i >= 0; i--) {
                md.update((byte) (block >>> (8 * i)));
            }
            byte[] h = md.digest();
            int n = Math.min(32 - skip, len - at);
            System.arraycopy(h, skip, out, at, n);
            at += n;
            skip = 0;
            block++;
        }
        return out;
    }

    /** What one side does: ROUNDS times, the client sends a chunk and reads one, the server the reverse. */
    private static final class Side implements Callable<long[]> {
        final SSLSocket sock;
        final Process proc;
        final boolean client, ask;
        final String sendLabel, recvLabel;

        /** ask: a KeyUpdate asking for the peer's before each chunk (tlsbridge's end, TLS 1.3). */
        Side(SSLSocket sock, boolean client, boolean ask, String name) {
            this(sock, null, client, ask, name);
        }

        /** An openssl s_client or s_server peer, through its stdin and stdout. */
        Side(Process proc, boolean client, String name) {
            this(null, proc, client, false, name);
        }

        private Side(SSLSocket sock, Process proc, boolean client, boolean ask, String name) {
            this.sock = sock;
            this.proc = proc;
            this.client = client;
            this.ask = ask;
            this.sendLabel = name + (client ? "/client" : "/server");
            this.recvLabel = name + (client ? "/server" : "/client");
        }

        @Override
        public long[] call() throws Exception {
            long sent = 0, received = 0, updates = 0;
            OutputStream out;
            InputStream in;
            if (proc != null) {
                out = proc.getOutputStream();
                in = proc.getInputStream();
            } else {
                sock.setSoTimeout(60_000);
                sock.startHandshake();
                out = sock.getOutputStream();
                in = sock.getInputStream();
            }
            int chunk = Arrays.stream(SIZES).sum();
            for (int r = 0; r < ROUNDS; r++) {
                if (!client) {
                    received += expect(in, received, chunk);
                }
                if (ask) {
                    sock.startHandshake(); // after the handshake: a KeyUpdate that asks for the peer's
                    updates++;
                }
                for (int n : SIZES) {
                    out.write(stream(sendLabel, sent, n));
                    sent += n;
                }
                out.flush();
                if (client) {
                    received += expect(in, received, chunk);
                }
            }
            if (client) {
                close(out); // s_client: the end of its input sends close_notify
            } else {
                int b = in.read(); // the client's close (s_server: it exits)
                if (b != -1) {
                    throw new IOException("a byte after the last chunk: " + b);
                }
                close(out);
            }
            return new long[] {sent, received, updates};
        }

        private void close(OutputStream out) throws IOException {
            if (proc != null) {
                out.close();
            } else {
                sock.close();
            }
        }

        private int expect(InputStream in, long from, int len) throws Exception {
            byte[] got = in.readNBytes(len);
            if (got.length != len) {
                throw new IOException((client ? "client" : "server") + " read " + got.length + " of " + len);
            }
            if (!Arrays.equals(got, stream(recvLabel, from, len))) {
                throw new IOException((client ? "client" : "server") + " read bytes that differ from the stream");
            }
            return len;
        }
    }

    private static String connection(Path dir, String name, String role, String bio, String proto, String suite,
            SSLContext tb, SSLContext jdk) throws Exception {
        boolean tbServer = role.equals("server");
        boolean tls13 = proto.equals("TLSv1.3");
        InetAddress lo = InetAddress.getLoopbackAddress();
        SSLContext serverCtx = tbServer ? tb : jdk, clientCtx = tbServer ? jdk : tb;
        boolean layeredServer = tbServer && bio.equals("engine"), layeredClient = !tbServer && bio.equals("engine");
        ServerSocket listener = layeredServer ? new ServerSocket(0, 8, lo)
                : serverCtx.getServerSocketFactory().createServerSocket(0, 8, lo);
        try (ServerSocket relay = new ServerSocket(0, 8, lo); listener) {
            Future<SSLSocket> accepted = POOL.submit(() -> accept(listener, layeredServer ? serverCtx : null, proto, suite));
            Future<Void> relayed = relay(relay, listener.getLocalPort(), dir);
            SSLSocket client = connect(clientCtx, layeredClient, relay.getLocalPort(), proto, suite);
            SSLSocket server = accepted.get(60, TimeUnit.SECONDS);
            Future<long[]> cs = POOL.submit(new Side(client, true, !tbServer && tls13, name));
            Future<long[]> ss = POOL.submit(new Side(server, false, tbServer && tls13, name));
            long[] c = get(cs, client, server), s = get(ss, client, server);
            relayed.get(60, TimeUnit.SECONDS);
            long[] tbSide = tbServer ? s : c;
            meta(dir, name, role, bio, proto, suite, tbServer ? server : client, tbSide[0], (tbServer ? c : s)[0], tbSide[2], null);
            return "sent=" + tbSide[0] + " received=" + tbSide[1] + " keyupdates_asked=" + tbSide[2];
        }
    }

    /**
     * tlsbridge against a peer process, the relay between them; tlsbridge asks for no KeyUpdate. Go
     * (gopeer.go) runs the exchange itself and says what it sent and received; openssl s_client or
     * s_server (its stdin and stdout the plaintext) has it run here, by a Side over its pipes.
     */
    private static String processConnection(Path dir, String name, String peer, String role, String bio, String proto,
            String suite, SSLContext tbCtx, String program, Path pem, long keyLimit) throws Exception {
        boolean tbServer = role.equals("server"), layered = bio.equals("engine"), go = peer.equals("go");
        InetAddress lo = InetAddress.getLoopbackAddress();
        Path peerOut = dir.resolve(peer + ".out");
        try (ServerSocket relay = new ServerSocket(0, 8, lo);
                ServerSocket listener = !tbServer ? null : layered ? new ServerSocket(0, 8, lo)
                        : tbCtx.getServerSocketFactory().createServerSocket(0, 8, lo)) {
            Process p;
            SSLSocket tb;
            Future<Void> relayed;
            if (tbServer) {
                Future<SSLSocket> accepted = POOL.submit(() -> accept(listener, layered ? tbCtx : null, proto, suite));
                relayed = relay(relay, listener.getLocalPort(), dir);
                p = start(peerCommand(peer, program, "client", relay.getLocalPort(), pem, name, proto), go, peerOut);
                tb = accepted.get(60, TimeUnit.SECONDS);
            } else {
                int port = 0;
                if (!go) {
                    try (ServerSocket free = new ServerSocket(0, 1, lo)) {
                        port = free.getLocalPort(); // s_server -quiet says nothing when it listens
                    }
                }
                p = start(peerCommand(peer, program, "server", port, pem, name, proto), go, peerOut);
                relayed = relay(relay, go ? goPort(peerOut, p) : port, dir);
                tb = connect(tbCtx, layered, relay.getLocalPort(), proto, suite);
            }
            long[] mine, theirs = null;
            try {
                Future<long[]> peerSide = go ? null : POOL.submit(new Side(p, tbServer, name));
                mine = POOL.submit(new Side(tb, !tbServer, false, name)).get(120, TimeUnit.SECONDS);
                if (peerSide != null) {
                    theirs = peerSide.get(60, TimeUnit.SECONDS);
                }
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    throw new IOException("the " + peer + " peer did not finish");
                }
            } finally {
                tb.close();
                p.destroyForcibly();
            }
            relayed.get(60, TimeUnit.SECONDS);
            String done = theirs != null ? "DONE sent=" + theirs[0] + " received=" + theirs[1]
                    : readLines(peerOut).stream().filter(l -> l.startsWith("DONE ")).findFirst().orElse(
                            "the Go peer failed: " + String.join(" / ", readLines(peerOut)));
            if (p.exitValue() != 0 || !done.equals("DONE sent=" + mine[1] + " received=" + mine[0])) {
                throw new IOException(peer + ": \"" + done + "\", exit " + p.exitValue() + "; tlsbridge sent " + mine[0]
                        + ", received " + mine[1] + (go ? "" : "; " + String.join(" / ", readLines(peerOut))));
            }
            meta(dir, name, role, bio, proto, suite, tb, mine[0], mine[1], 0, "peer " + peer + "\nkey_limit " + keyLimit);
            return "sent=" + mine[0] + " received=" + mine[1] + " key_limit=" + keyLimit;
        }
    }

    /** The peer's command line: PORT is the one to connect to (client) or listen on (s_server). */
    private static List<String> peerCommand(String peer, String program, String role, int port, Path pem, String name,
            String proto) {
        if (peer.equals("go")) {
            List<String> cmd = new ArrayList<>(List.of(program, role, pem.toString(), name, proto,
                    Arrays.stream(SIZES).mapToObj(Integer::toString).collect(Collectors.joining(",")),
                    Integer.toString(ROUNDS)));
            if (role.equals("client")) {
                cmd.add(Integer.toString(port));
            }
            return cmd;
        }
        String version = proto.equals("TLSv1.3") ? "-tls1_3" : "-tls1_2";
        if (role.equals("client")) {
            // -no_ign_eof after -quiet: the end of stdin ends the connection; -nocommands: the stream's
            // bytes are never read as s_client's single-letter commands
            return List.of(program, "s_client", "-connect", "127.0.0.1:" + port, "-servername", "localhost",
                    "-quiet", "-no_ign_eof", "-nocommands", version);
        }
        return List.of(program, "s_server", "-accept", "127.0.0.1:" + port, "-naccept", "1", "-quiet",
                "-cert", pem.toString(), "-key", pem.toString(), version);
    }

    /** Go writes its report to OUT; openssl's stdout is the plaintext, its stderr goes to OUT. */
    private static Process start(List<String> cmd, boolean go, Path out) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (go) {
            pb.redirectErrorStream(true).redirectOutput(out.toFile());
        } else {
            pb.redirectError(out.toFile());
        }
        return pb.start();
    }

    /** The port a Go server prints once it listens. */
    private static int goPort(Path out, Process p) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            for (String l : readLines(out)) {
                if (l.startsWith("LISTENING ")) {
                    return Integer.parseInt(l.substring(10).trim());
                }
            }
            if (!p.isAlive()) {
                break;
            }
            Thread.sleep(10);
        }
        throw new IOException("the Go server did not listen: " + String.join(" / ", readLines(out)));
    }

    private static List<String> readLines(Path f) {
        try {
            return Files.readAllLines(f);
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The server end: the native server socket's, or a layered socket over a plain accepted one (layered != null). */
    private static SSLSocket accept(ServerSocket listener, SSLContext layered, String proto, String suite)
            throws IOException {
        Socket s = listener.accept();
        SSLSocket ss = layered != null
                ? (SSLSocket) layered.getSocketFactory().createSocket(s, new ByteArrayInputStream(new byte[0]), true)
                : (SSLSocket) s;
        ss.setUseClientMode(false);
        configure(ss, proto, suite);
        return ss;
    }

    private static SSLSocket connect(SSLContext ctx, boolean layered, int port, String proto, String suite)
            throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        SSLSocket client;
        if (layered) {
            Socket plain = new Socket(lo, port);
            client = (SSLSocket) ctx.getSocketFactory().createSocket(plain, "localhost", port, true);
        } else {
            client = (SSLSocket) ctx.getSocketFactory().createSocket(lo, port);
        }
        configure(client, proto, suite);
        return client;
    }

    /** Accepts one connection on relay, connects it to port and records each direction into dir. */
    private static Future<Void> relay(ServerSocket relay, int port, Path dir) {
        InetAddress lo = InetAddress.getLoopbackAddress();
        return POOL.submit(() -> {
            try (Socket c = relay.accept(); Socket s = connectRetrying(lo, port)) {
                Future<?> up = POOL.submit(() -> copy(c, s, dir.resolve("c2s.bin")));
                Future<?> down = POOL.submit(() -> copy(s, c, dir.resolve("s2c.bin")));
                up.get(120, TimeUnit.SECONDS);
                down.get(120, TimeUnit.SECONDS);
            }
            return null;
        });
    }

    /** A server process may not listen yet (s_server says nothing when it does): try for 10 s. */
    private static Socket connectRetrying(InetAddress lo, int port) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                return new Socket(lo, port);
            } catch (java.net.ConnectException e) {
                if (System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }

    /** Checks tlsbridge's end (the BIO under test, the suite) and writes what the checker needs. */
    private static void meta(Path dir, String name, String role, String bio, String proto, String suite, SSLSocket tb,
            long sent, long peerSent, long asked, String more) throws IOException {
        boolean tbServer = role.equals("server");
        // The BIO under test: the native socket's class, or the layered socket over the engine.
        String cls = tb.getClass().getName();
        String want = bio.equals("socket") ? "org.tlsbridge.socket.TlsBridgeSocket"
                : "org.tlsbridge.socket.LayeredSslSocket";
        if (!cls.equals(want)) {
            throw new IOException("tlsbridge's end is a " + cls + ", not a " + want);
        }
        String got = tb.getSession().getCipherSuite();
        if (!got.equals(suite)) {
            throw new IOException("negotiated " + got + ", not " + suite);
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(dir.resolve("meta.txt")))) {
            w.println("tlsbridge " + role);
            w.println("bio " + bio);
            w.println("protocol " + proto);
            w.println("suite " + suite);
            w.println("label " + name + "/" + role);
            w.println("sent " + sent);
            w.println("peer_label " + name + "/" + (tbServer ? "client" : "server"));
            w.println("peer_sent " + peerSent);
            w.println("updates_asked " + asked);
            if (more != null) {
                w.println(more);
            }
        }
    }

    private static long[] get(Future<long[]> f, SSLSocket a, SSLSocket b) throws Exception {
        try {
            return f.get(120, TimeUnit.SECONDS);
        } catch (Exception e) {
            a.close();
            b.close();
            throw e;
        }
    }

    private static void configure(SSLSocket s, String proto, String suite) {
        s.setEnabledProtocols(new String[] {proto});
        s.setEnabledCipherSuites(new String[] {suite});
    }

    /** One direction of the relay: forwards and records, then passes the end of stream on. */
    private static Void copy(Socket from, Socket to, Path file) throws IOException {
        byte[] buf = new byte[65536];
        try (OutputStream rec = new FileOutputStream(file.toFile())) {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            int n;
            while (true) {
                try {
                    n = in.read(buf);
                } catch (IOException e) {
                    break; // a reset after the last record: what was read is what was sent
                }
                if (n < 0) {
                    break;
                }
                rec.write(buf, 0, n);
                try {
                    out.write(buf, 0, n);
                } catch (IOException e) {
                    // the receiver has closed: the bytes were still sent, keep recording
                }
            }
            try {
                to.shutdownOutput();
            } catch (IOException e) {
                // already closed
            }
        }
        return null;
    }
}
