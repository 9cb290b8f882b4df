package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate.Type;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.tlsbridge.internal.Diagnostics;
import org.tlsbridge.internal.NativeObjects;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.LiveCounts;
import org.tlsbridge.test.Processes;

/**
 * Tomcat's own certificate reload (reloadSslHostConfigs, as JMX and the
 * Manager's sslReload call it) on TlsBridgeImplementation connectors, one
 * with PEM files and one with a PKCS#12 key store: after the files change
 * and the reload, openssl s_client sees the new certificate, a keep-alive
 * connection opened before still serves requests, and the old configuration's
 * native contexts are freed once its last connection is gone (live counts)
 * and Tomcat has reused that connection's cached channel. Native SSLs are
 * not compared: one that Tomcat closed first stays with its cached channel
 * until reuse, a count that depends on Tomcat's cache, not on the reload.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TomcatReloadTest {
    /** More than this test ever has open at once on one connector. */
    private static final int CHANNELS = 8;

    private TomcatPki pki;
    @AutoClose
    private EmbeddedTomcat tc;
    // static: JUnit fills an instance @TempDir field before each test, after @BeforeAll has needed it
    @TempDir
    private static Path dir;
    private Connector pem;
    private Connector store;
    private final SSLContext client = Contexts.client(Contexts.sun());

    @BeforeAll
    void start() throws Exception {
        pki = TomcatPki.get();
        usePem("rsa");
        useStore("rsa");
        tc = new EmbeddedTomcat(null);
        SSLHostConfig p = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.pem(p, Type.UNDEFINED, dir.resolve("live.key").toString(), dir.resolve("live.pem").toString(),
                null, null);
        pem = tc.https(EmbeddedTomcat.IMPL, p);
        SSLHostConfig s = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.keystore(s, Type.UNDEFINED, dir.resolve("live.p12").toString(), "PKCS12");
        store = tc.https(EmbeddedTomcat.IMPL, s);
        tc.start();
    }

    /** The files a renewal replaces, written as certbot's deploy step would: new file, then rename. */
    private void usePem(String name) throws IOException {
        replace(pki.path(name + ".key"), dir.resolve("live.key"));
        replace(pki.path(name + ".pem"), dir.resolve("live.pem"));
    }

    private void useStore(String name) throws IOException {
        replace(pki.path(name + ".p12"), dir.resolve("live.p12"));
    }

    private static void replace(String from, Path to) throws IOException {
        Path tmp = to.resolveSibling(to.getFileName() + ".new");
        Files.copy(Path.of(from), tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private String fingerprint(String name) throws Exception {
        try (InputStream in = Files.newInputStream(Path.of(pki.path(name + ".pem")))) {
            return sha256((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
    }

    private static String sha256(X509Certificate c) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(c.getEncoded()));
    }

    /** The leaf certificate openssl s_client is shown by a new connection, as a SHA-256 fingerprint. */
    private String presented(int port) throws Exception {
        Processes.Run r = Clients.sClient(pki, port, "localhost", "/info");
        assertEquals(0, r.exit, r.out);
        assertTrue(r.out.contains("HTTP/1.1 200"), r.out);
        Matcher m = Pattern.compile("-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----").matcher(r.out);
        assertTrue(m.find(), r.out);
        return sha256((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
                new java.io.ByteArrayInputStream(m.group().getBytes(StandardCharsets.US_ASCII))));
    }

    /** Tomcat's reload of every SSLHostConfig of a connector, through its ProtocolHandler MBean (as jconsole would). */
    private static void reloadByJmx(Connector c) throws Exception {
        ObjectName name = ((AbstractProtocol<?>) c.getProtocolHandler()).getObjectName();
        MBeanServer s = ManagementFactory.getPlatformMBeanServer();
        assertTrue(name != null && s.isRegistered(name), "the connector's ProtocolHandler MBean: " + name);
        s.invoke(name, "reloadSslHostConfigs", null, null);
    }

    /** One HTTP/1.1 keep-alive connection (SunJSSE client), for requests before and after a reload. */
    private final class KeepAlive implements AutoCloseable {
        final SSLSocket socket;
        final String leaf;

        KeepAlive(int port) throws Exception {
            socket = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", port);
            socket.setSoTimeout(30_000);
            socket.startHandshake();
            leaf = sha256((X509Certificate) socket.getSession().getPeerCertificates()[0]);
        }

        String get() throws IOException {
            OutputStream out = socket.getOutputStream();
            out.write("GET /info HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String head = readHead(in);
            Matcher m = Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
            assertTrue(m.find(), "a Content-Length in " + head);
            byte[] body = in.readNBytes(Integer.parseInt(m.group(1)));
            return head + new String(body, StandardCharsets.US_ASCII);
        }

        private String readHead(InputStream in) throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            int c;
            while ((c = in.read()) >= 0) {
                b.write(c);
                String s = b.toString(StandardCharsets.US_ASCII);
                if (s.endsWith("\r\n\r\n")) {
                    return s;
                }
            }
            throw new IOException("connection closed after " + b.size() + " bytes: " + b);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /**
     * Tomcat keeps the channels of closed connections for reuse (socket.bufferPool), each
     * still holding its SSLEngine, and so the engine's context, until a new connection takes
     * it (last closed, first reused). CHANNELS connections open at once take every channel
     * this test ever made, so afterwards no closed connection's engine is left.
     */
    private void cycleChannels(int port) throws Exception {
        List<KeepAlive> all = new ArrayList<>();
        try {
            for (int i = 0; i < CHANNELS; i++) {
                all.add(new KeepAlive(port));
            }
            for (KeepAlive k : all) {
                assertTrue(k.get().startsWith("HTTP/1.1 200"));
            }
        } finally {
            for (KeepAlive k : all) {
                k.close();
            }
        }
    }

    private void reloadKeepsOpenConnectionsAndServesTheNewCertificate(Connector c, Runnable swap,
            Runnable swapBack) throws Exception {
        int port = c.getLocalPort();
        assertEquals(fingerprint("rsa"), presented(port));
        cycleChannels(port);
        LiveCounts base = LiveCounts.settled();
        try (KeepAlive old = new KeepAlive(port)) {
            assertEquals(fingerprint("rsa"), old.leaf);
            assertTrue(old.get().contains("HTTP/1.1 200"));
            swap.run();
            reloadByJmx(c);
            assertEquals(fingerprint("ec"), presented(port), "a new handshake presents the new certificate");
            String again = old.get();
            assertTrue(again.startsWith("HTTP/1.1 200") && again.contains("tls_protocol=TLSv1.3"),
                    "the connection opened before the reload still serves: " + again);
            assertEquals(base.contexts + 1, LiveCounts.await(Diagnostics::liveContexts, base.contexts + 1),
                    "old and new context alive while the old connection is open: " + LiveCounts.now());
        }
        cycleChannels(port);
        assertEquals(base.contexts, LiveCounts.await(Diagnostics::liveContexts, base.contexts),
                "the old context is freed once its last connection closed: " + LiveCounts.now());
        assertEquals(base.keys, LiveCounts.await(Diagnostics::liveKeys, base.keys),
                "old key material freed: " + LiveCounts.now());
        swapBack.run();
        reloadByJmx(c);
        assertEquals(fingerprint("rsa"), presented(port));
    }

    @Test
    @Order(1)
    void pemFiles() throws Exception {
        reloadKeepsOpenConnectionsAndServesTheNewCertificate(pem, () -> unchecked(() -> usePem("ec")),
                () -> unchecked(() -> usePem("rsa")));
    }

    @Test
    @Order(2)
    void keyStore() throws Exception {
        reloadKeepsOpenConnectionsAndServesTheNewCertificate(store, () -> unchecked(() -> useStore("ec")),
                () -> unchecked(() -> useStore("rsa")));
    }

    /**
     * 100 reloads, alternating certificates, with a handshake every ten:
     * afterwards the live counts are back where they started. Reload
     * latency and native heap are printed for the report, never asserted.
     */
    @Test
    @Order(3)
    void hundredReloadsLeaveNothingBehind() throws Exception {
        int port = pem.getLocalPort();
        cycleChannels(port);
        LiveCounts base = LiveCounts.settled();
        long heap0 = Diagnostics.nativeHeapInUse();
        List<Long> micros = new ArrayList<>();
        for (int i = 1; i <= 100; i++) {
            usePem(i % 2 == 1 ? "ec" : "rsa");
            long t0 = System.nanoTime();
            reloadByJmx(pem);
            micros.add((System.nanoTime() - t0) / 1000);
            if (i % 10 == 0) {
                assertEquals(fingerprint(i % 2 == 1 ? "ec" : "rsa"), presented(port), "after reload " + i);
            }
        }
        usePem("rsa");
        reloadByJmx(pem);
        cycleChannels(port);
        LiveCounts after = LiveCounts.settled();
        long heap1 = Diagnostics.nativeHeapInUse();
        Collections.sort(micros);
        System.out.printf("100 reloads (PEM, JMX): latency min/median/max %.1f/%.1f/%.1f ms; live %s -> %s;"
                + " native heap %d -> %d KiB%n", micros.get(0) / 1e3, micros.get(50) / 1e3, micros.get(99) / 1e3,
                base, after, heap0 >> 10, heap1 >> 10);
        assertEquals(base.contexts, LiveCounts.await(Diagnostics::liveContexts, base.contexts),
                "contexts back to baseline after 100 reloads: " + LiveCounts.now());
        assertEquals(base.keys, LiveCounts.await(Diagnostics::liveKeys, base.keys), "key material back to baseline");
    }

    /** A renewal caught half-way (new certificate, old key): the reload fails, the old certificate stays. */
    @Test
    @Order(4)
    void mismatchedFilesKeepTheServingCertificate() throws Exception {
        int port = pem.getLocalPort();
        assertEquals(fingerprint("rsa"), presented(port));
        replace(pki.path("ec.pem"), dir.resolve("live.pem"));
        try {
            Exception e = assertThrows(Exception.class, () -> reloadByJmx(pem));
            StringBuilder causes = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                causes.append(t).append(" / ");
            }
            System.out.println("reload with mismatched files: " + causes);
            assertEquals(fingerprint("rsa"), presented(port), "the previous certificate still serves");
        } finally {
            usePem("rsa");
        }
        reloadByJmx(pem);
        assertEquals(fingerprint("rsa"), presented(port));
    }

    @Test
    @Order(5)
    void countsAreOnJmx() throws Exception {
        MBeanServer s = ManagementFactory.getPlatformMBeanServer();
        ObjectName n = new ObjectName(NativeObjects.NAME);
        assertTrue(s.isRegistered(n), "TlsBridgeImplementation registers " + NativeObjects.NAME);
        long contexts = (Long) s.getAttribute(n, "Contexts");
        assertTrue(contexts >= 2, "at least the two connectors' contexts: " + contexts);
        assertEquals(Diagnostics.liveKeys(), (Long) s.getAttribute(n, "Keys"));
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private static void unchecked(IoAction a) {
        try {
            a.run();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
