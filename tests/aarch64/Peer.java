// The Java side of tests/aarch64/run.sh, run on the arm64 JDK under qemu and
// on the host's x86_64 JDK: a TLS server and client over loopback (tlsbridge
// or SunJSSE), and an in-memory engine pair moving N MiB with SHA-256 of
// both ends. Compiled by run.sh against the jar; prints lines run.sh greps.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.tlsbridge.TlsBridgeProvider;

public final class Peer {
    public static void main(String[] a) throws Exception {
        switch (a[0]) {
            case "server": server(provider(a[1]), a[2], a[3], Integer.parseInt(a[4])); break;
            case "client": client(provider(a[1]), a[2], Integer.parseInt(a[3]), a[4].split(",")); break;
            case "pair": pair(a[1], a[2], Integer.parseInt(a[3])); break;
            default: throw new IllegalArgumentException(a[0]);
        }
    }

    static Provider provider(String name) {
        return name.equals("tlsbridge") ? new TlsBridgeProvider() : java.security.Security.getProvider(name);
    }

    static SSLContext context(Provider p, String p12, String caPem) throws Exception {
        KeyManagerFactory kmf = null;
        if (p12 != null) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try (FileInputStream in = new FileInputStream(p12)) {
                ks.load(in, "changeit".toCharArray());
            }
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, "changeit".toCharArray());
        }
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        try (FileInputStream in = new FileInputStream(caPem)) {
            ts.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext c = SSLContext.getInstance("TLS", p);
        c.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return c;
    }

    /** Answers n connections in turn: "pong <protocol> <suite>" to the line it reads. */
    static void server(Provider p, String p12, String caPem, int n) throws Exception {
        SSLContext c = context(p, p12, caPem);
        try (SSLServerSocket ss = (SSLServerSocket) c.getServerSocketFactory()
                .createServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            ss.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            System.out.println("PORT " + ss.getLocalPort());
            System.out.flush();
            for (int i = 0; i < n; i++) {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.setSoTimeout(120_000);
                    String line = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))
                            .readLine();
                    String proto = s.getSession().getProtocol();
                    String reply = "pong " + proto + " " + s.getSession().getCipherSuite();
                    System.out.println("SERVER got '" + line + "' over " + proto);
                    OutputStream out = s.getOutputStream();
                    out.write((reply + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                } catch (Exception e) {
                    System.out.println("SERVER connection " + i + " failed: " + e);
                }
            }
        }
    }

    /** One connection per protocol; prints "CLIENT <asked> <negotiated> <reply>". */
    static void client(Provider p, String caPem, int port, String[] protocols) throws Exception {
        SSLContext c = context(p, null, caPem);
        for (String proto : protocols) {
            try (SSLSocket s = (SSLSocket) c.getSocketFactory().createSocket("localhost", port)) {
                s.setSoTimeout(120_000);
                s.setEnabledProtocols(new String[] {proto});
                s.getOutputStream().write(("ping " + proto + "\n").getBytes(StandardCharsets.UTF_8));
                s.getOutputStream().flush();
                String reply = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))
                        .readLine();
                System.out.println("CLIENT " + proto + " " + s.getSession().getProtocol() + " " + reply);
            }
        }
    }

    /** Client to server through two tlsbridge engines in memory: mib MiB, SHA-256 of each end. */
    static void pair(String p12, String caPem, int mib) throws Exception {
        Provider p = new TlsBridgeProvider();
        SSLEngine cl = context(p, null, caPem).createSSLEngine("localhost", 443);
        cl.setUseClientMode(true);
        SSLEngine sv = context(p, p12, caPem).createSSLEngine();
        sv.setUseClientMode(false);
        int net = cl.getSession().getPacketBufferSize();
        int app = cl.getSession().getApplicationBufferSize();
        ByteBuffer c2s = ByteBuffer.allocateDirect(net * 4);
        ByteBuffer s2c = ByteBuffer.allocateDirect(net * 4);
        ByteBuffer got = ByteBuffer.allocateDirect(app * 2);
        ByteBuffer sink = ByteBuffer.allocateDirect(app * 2);
        ByteBuffer src = ByteBuffer.allocateDirect(16384);
        ByteBuffer none = ByteBuffer.allocate(0);
        MessageDigest sent = MessageDigest.getInstance("SHA-256");
        MessageDigest recv = MessageDigest.getInstance("SHA-256");
        // One random MiB sent over and over, each 16 KiB chunk stamped with its
        // number: a lost, repeated or reordered chunk changes the digest, and
        // no random generator runs per byte under qemu.
        byte[] block = new byte[1 << 20];
        new SecureRandom().nextBytes(block);
        byte[] chunk = new byte[16384];
        long chunkNo = 0;
        long total = (long) mib << 20, queued = 0, received = 0;
        long t0 = System.nanoTime();
        src.limit(0);
        // A few rounds per 16 KiB record at most: more means the pair is stuck.
        long spins = 0, maxSpins = 4 * (total / 16384) + 1000;
        while (received < total) {
            if (++spins > maxSpins) {
                throw new IllegalStateException("no progress after " + received + " bytes");
            }
            // Client: handshake or data toward the server.
            runTasks(cl);
            if (!src.hasRemaining() && queued < total && cl.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING) {
                int n = (int) Math.min(chunk.length, total - queued);
                System.arraycopy(block, (int) (queued % block.length), chunk, 0, n);
                ByteBuffer.wrap(chunk).putLong(0, chunkNo++);
                sent.update(chunk, 0, n);
                src.clear();
                src.put(chunk, 0, n).flip();
                queued += n;
            }
            cl.wrap(src.hasRemaining() ? src : none, c2s);
            s2c.flip();
            cl.unwrap(s2c, sink);
            s2c.compact();
            sink.clear();
            // Server: handshake replies, and the data it decrypts.
            runTasks(sv);
            c2s.flip();
            SSLEngineResult r;
            do {
                r = sv.unwrap(c2s, got);
                got.flip();
                received += got.remaining();
                while (got.hasRemaining()) {
                    int n = Math.min(chunk.length, got.remaining());
                    byte[] b = new byte[n];
                    got.get(b);
                    recv.update(b);
                }
                got.clear();
                runTasks(sv);
            } while (r.getStatus() == SSLEngineResult.Status.OK && r.bytesConsumed() > 0 && c2s.hasRemaining());
            c2s.compact();
            sv.wrap(none, s2c);
        }
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.println("PAIR protocol " + cl.getSession().getProtocol() + " " + cl.getSession().getCipherSuite());
        System.out.println("PAIR sent " + hex(sent.digest()));
        System.out.println("PAIR received " + hex(recv.digest()));
        System.out.printf("PAIR %d MiB in %.1f s (%.1f MiB/s)%n", mib, s, mib / s);
    }

    static void runTasks(SSLEngine e) {
        Runnable t;
        while ((t = e.getDelegatedTask()) != null) {
            t.run();
        }
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x));
        }
        return sb.toString();
    }
}
