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
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
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
 *   java -Dtlsbridge.keylog=K OpenerRun OUT FLAVOUR rsa.p12 ec.p12 password
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
        int failed = 0;
        for (String role : new String[] {"server", "client"}) {
            for (String bio : new String[] {"socket", "engine"}) {
                for (String[] s : SUITES) {
                    KeyStore ks = s[2].equals("rsa") ? rsa : ec;
                    String name = flavour + "-" + role + "-" + bio + "-" + s[1];
                    Path dir = out.resolve(name);
                    Files.createDirectories(dir);
                    try {
                        String facts = connection(dir, name, role, bio, s[0], s[1],
                                context("TLSBridge", ks, pw, tmf), context("SunJSSE", ks, pw, tmf));
                        System.out.println("OK " + name + " " + facts);
                    } catch (Throwable e) {
                        failed++;
                        System.out.println("FAILED " + name + ": " + e);
                        e.printStackTrace(System.out);
                    }
                }
            }
        }
        System.exit(failed == 0 ? 0 : 1);
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
        final boolean client, tlsbridge, tls13;
        final String sendLabel, recvLabel;

        Side(SSLSocket sock, boolean client, boolean tlsbridge, boolean tls13, String name) {
            this.sock = sock;
            this.client = client;
            this.tlsbridge = tlsbridge;
            this.tls13 = tls13;
            this.sendLabel = name + (client ? "/client" : "/server");
            this.recvLabel = name + (client ? "/server" : "/client");
        }

        @Override
        public long[] call() throws Exception {
            long sent = 0, received = 0, updates = 0;
            sock.setSoTimeout(60_000);
            sock.startHandshake();
            OutputStream out = sock.getOutputStream();
            InputStream in = sock.getInputStream();
            int chunk = Arrays.stream(SIZES).sum();
            for (int r = 0; r < ROUNDS; r++) {
                if (!client) {
                    received += expect(in, received, chunk);
                }
                if (tlsbridge && tls13) {
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
                sock.close();
            } else {
                int b = in.read(); // the client's close
                if (b != -1) {
                    throw new IOException("a byte after the last chunk: " + b);
                }
                sock.close();
            }
            return new long[] {sent, received, updates};
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
            Future<SSLSocket> accepted = POOL.submit(() -> {
                Socket s = listener.accept();
                SSLSocket ss = layeredServer
                        ? (SSLSocket) serverCtx.getSocketFactory().createSocket(s, new ByteArrayInputStream(new byte[0]), true)
                        : (SSLSocket) s;
                ss.setUseClientMode(false);
                configure(ss, proto, suite);
                return ss;
            });
            Future<Void> relayed = POOL.submit(() -> {
                try (Socket c = relay.accept(); Socket s = new Socket(lo, listener.getLocalPort())) {
                    Future<?> up = POOL.submit(() -> copy(c, s, dir.resolve("c2s.bin")));
                    Future<?> down = POOL.submit(() -> copy(s, c, dir.resolve("s2c.bin")));
                    up.get(120, TimeUnit.SECONDS);
                    down.get(120, TimeUnit.SECONDS);
                }
                return null;
            });
            SSLSocket client;
            if (layeredClient) {
                Socket plain = new Socket(lo, relay.getLocalPort());
                client = (SSLSocket) clientCtx.getSocketFactory().createSocket(plain, "localhost", relay.getLocalPort(), true);
            } else {
                client = (SSLSocket) clientCtx.getSocketFactory().createSocket(lo, relay.getLocalPort());
            }
            configure(client, proto, suite);
            SSLSocket server = accepted.get(60, TimeUnit.SECONDS);
            Future<long[]> cs = POOL.submit(new Side(client, true, !tbServer, tls13, name));
            Future<long[]> ss = POOL.submit(new Side(server, false, tbServer, tls13, name));
            long[] c = get(cs, client, server), s = get(ss, client, server);
            relayed.get(60, TimeUnit.SECONDS);
            // The BIO under test: the native socket's class, or the layered socket over the engine.
            String cls = (tbServer ? server : client).getClass().getName();
            String want = bio.equals("socket") ? "org.tlsbridge.socket.TlsBridgeSocket"
                    : "org.tlsbridge.socket.LayeredSslSocket";
            if (!cls.equals(want)) {
                throw new IOException("tlsbridge's end is a " + cls + ", not a " + want);
            }
            String got = (tbServer ? server : client).getSession().getCipherSuite();
            if (!got.equals(suite)) {
                throw new IOException("negotiated " + got + ", not " + suite);
            }
            long[] tbSide = tbServer ? s : c;
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(dir.resolve("meta.txt")))) {
                w.println("tlsbridge " + role);
                w.println("bio " + bio);
                w.println("protocol " + proto);
                w.println("suite " + suite);
                w.println("label " + name + "/" + role);
                w.println("sent " + tbSide[0]);
                w.println("peer_label " + name + "/" + (tbServer ? "client" : "server"));
                w.println("peer_sent " + (tbServer ? c : s)[0]);
                w.println("updates_asked " + tbSide[2]);
            }
            return "sent=" + tbSide[0] + " received=" + tbSide[1] + " keyupdates_asked=" + tbSide[2];
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
