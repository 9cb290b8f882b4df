package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.OneShotServer;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * Each secure default (docs/security.md) against a real peer: openssl
 * s_client and SunJSSE over loopback sockets, or hand-made bytes where no
 * conformant peer would send them (oversized records, ClientHello headers
 * announcing more than OpenSSL accepts).
 */
class SecureDefaultsTest {
    private static final TestPki PKI = TestPki.get();
    /** AEAD (GCM or ChaCha20-Poly1305) with ephemeral (EC)DH key exchange, or a TLS 1.3 suite. */
    private static final Pattern SECURE = Pattern.compile(
            "TLS_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256"
                    + "|ECDHE_(RSA|ECDSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256))");
    private static final Pattern NEVER = Pattern.compile(".*(NULL|anon|EXPORT|RC4|_DES_|3DES|MD5|PSK|SRP|_DSS_).*");

    // ---- what the lists say ----

    @Test
    void defaultSuitesAreForwardSecretAeadOnly() throws Exception {
        SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        List<String[]> lists = new ArrayList<>();
        SSLEngine server = ctx.createSSLEngine();
        server.setUseClientMode(false);
        lists.add(server.getEnabledCipherSuites());
        lists.add(Contexts.client(Contexts.TLSBRIDGE).createSSLEngine().getEnabledCipherSuites());
        lists.add(ctx.getDefaultSSLParameters().getCipherSuites());
        lists.add(ctx.getServerSocketFactory().getDefaultCipherSuites());
        lists.add(ctx.getSocketFactory().getDefaultCipherSuites());
        for (String[] l : lists) {
            assertTrue(l.length >= 6, Arrays.toString(l));
            for (String s : l) {
                assertTrue(SECURE.matcher(s).matches(), "not a secure default: " + s + " in " + Arrays.toString(l));
            }
        }
        // CBC and static RSA exist, to be enabled by name; nothing broken does
        List<String> supported = Arrays.asList(server.getSupportedCipherSuites());
        assertTrue(supported.contains("TLS_RSA_WITH_AES_128_CBC_SHA"), supported.toString());
        assertTrue(supported.contains("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"), supported.toString());
        for (String s : supported) {
            assertFalse(NEVER.matcher(s).matches(), "offered at all: " + s);
        }
    }

    @Test
    void protocolsAreTls12AndUp() throws Exception {
        SSLEngine e = Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine();
        assertArrayEquals(new String[] {"TLSv1.3", "TLSv1.2"}, e.getSupportedProtocols());
        assertArrayEquals(new String[] {"TLSv1.3", "TLSv1.2"}, e.getEnabledProtocols());
        // SunJSSE's rule: old names are accepted, kept and never negotiated (LegacyProtocolNamesTest)
        e.setEnabledProtocols(new String[] {"TLSv1", "TLSv1.1", "TLSv1.2"});
        assertArrayEquals(new String[] {"TLSv1", "TLSv1.1", "TLSv1.2"}, e.getEnabledProtocols());
        e.setEnabledProtocols(new String[] {"SSLv3", "TLSv1.1"});
        assertArrayEquals(new String[] {"SSLv3", "TLSv1.1"}, e.getEnabledProtocols());
        assertThrows(IllegalArgumentException.class, () -> e.setEnabledProtocols(new String[] {"TLSv1.4"}));
    }

    // ---- against openssl s_client ----

    /** A tlsbridge server for one connection; the future fails with the server's exception. */
    private static CompletableFuture<Void> serve(OneShotServer s, Consumer<SSLEngine> setup,
            OneShotServer.Exchange x) {
        return s.serve(Contexts.server(Contexts.TLSBRIDGE, "rsa", "ec"), 1, true, setup, x);
    }

    private static final OneShotServer.Exchange ECHO_LINE = c -> {
        byte[] in = c.read(6);
        c.write(new String(in, StandardCharsets.US_ASCII).toUpperCase().getBytes(StandardCharsets.US_ASCII));
    };

    /** openssl s_client with stdin, bounded in time; combined output. */
    private static String sClient(int port, byte[] stdin, String... extra) throws Exception {
        List<String> cmd = new ArrayList<>(Arrays.asList("openssl", "s_client", "-connect", "127.0.0.1:" + port,
                "-CAfile", PKI.file("ca.pem").toString(), "-servername", "localhost"));
        cmd.addAll(Arrays.asList(extra));
        return Processes.run(stdin, 30, cmd).toString();
    }

    private static Throwable serverFailure(CompletableFuture<Void> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            while (t instanceof RuntimeException && t.getCause() != null) {
                t = t.getCause();
            }
            return t;
        }
    }

    private static final byte[] HELLO = "hello\n".getBytes(StandardCharsets.US_ASCII);

    @ParameterizedTest
    @ValueSource(strings = {"-tls1", "-tls1_1"})
    void oldProtocolsRefused(String flag) throws Exception {
        try (OneShotServer s = new OneShotServer()) {
            CompletableFuture<Void> f = serve(s, null, ECHO_LINE);
            // SECLEVEL=0 so that it is the server, not the client's own policy, that says no
            String out = sClient(s.port, HELLO, flag, "-cipher", "DEFAULT:@SECLEVEL=0");
            Throwable t = serverFailure(f);
            assertNotNull(t, "server accepted " + flag + ":\n" + out);
            assertTrue(t instanceof javax.net.ssl.SSLHandshakeException, t.toString());
            assertTrue(t.getMessage().contains("unsupported protocol"), t.getMessage());
            assertTrue(out.contains("alert protocol version"), out);
            assertFalse(out.contains("HELLO"), out);
        }
        // the same client, allowed TLS 1.2, gets through: the refusal above is about the version
        try (OneShotServer s = new OneShotServer()) {
            CompletableFuture<Void> f = serve(s, null, ECHO_LINE);
            String out = sClient(s.port, HELLO, "-tls1_2", "-cipher", "DEFAULT:@SECLEVEL=0", "-ign_eof");
            assertEquals(null, serverFailure(f));
            assertTrue(out.contains("HELLO"), out);
            assertTrue(out.contains("Secure Renegotiation IS supported"), out);
            assertTrue(out.contains("Compression: NONE"), out);
        }
    }

    @Test
    void oldProtocolEnabledByNameStaysOff() throws Exception {
        try (OneShotServer s = new OneShotServer()) {
            CompletableFuture<Void> f = serve(s, e -> e.setEnabledProtocols(new String[] {"TLSv1.1", "TLSv1.2"}),
                    ECHO_LINE);
            String out = sClient(s.port, HELLO, "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0");
            assertNotNull(serverFailure(f), out);
            assertTrue(out.contains("alert protocol version"), out);
        }
    }

    /** Suites outside the defaults: refused unless enabled by name, then negotiated. */
    @ParameterizedTest
    @CsvSource({"AES128-SHA,TLS_RSA_WITH_AES_128_CBC_SHA", "AES256-GCM-SHA384,TLS_RSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-RSA-AES128-SHA,TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        "ECDHE-RSA-AES256-SHA384,TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
        "DHE-RSA-AES128-GCM-SHA256,TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"})
    void nonDefaultSuiteOnlyByName(String ossl, String std) throws Exception {
        try (OneShotServer s = new OneShotServer()) {
            CompletableFuture<Void> f = serve(s, null, ECHO_LINE);
            String out = sClient(s.port, HELLO, "-tls1_2", "-cipher", ossl);
            Throwable t = serverFailure(f);
            assertNotNull(t, "default server negotiated " + ossl + ":\n" + out);
            assertTrue(t.getMessage().contains("no shared cipher"), t.toString());
            assertTrue(out.contains("alert handshake failure"), out);
        }
        try (OneShotServer s = new OneShotServer()) {
            String[] got = new String[1];
            CompletableFuture<Void> f = serve(s, e -> e.setEnabledCipherSuites(new String[] {std}), c -> {
                got[0] = c.engine.getSession().getCipherSuite();
                ECHO_LINE.run(c);
            });
            String out = sClient(s.port, HELLO, "-tls1_2", "-cipher", ossl, "-ign_eof");
            assertEquals(null, serverFailure(f), out);
            assertEquals(std, got[0]);
            assertTrue(out.contains("Cipher is " + ossl), out);
            assertTrue(out.contains("HELLO"), out);
        }
    }

    /** OpenSSL security level 2 at least: a server with a 1024-bit RSA key is refused even when trusted. */
    @Test
    void weakServerKeyRefused() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("tlsbridge-weak");
        TestPki.run(dir, "openssl", "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", "weak.key", "-out",
                "weak.pem", "-subj", "/CN=localhost", "-days", "2", "-addext", "subjectAltName=DNS:localhost");
        java.security.KeyStore ts = java.security.KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        try (InputStream in = java.nio.file.Files.newInputStream(dir.resolve("weak.pem"))) {
            ts.setCertificateEntry("weak", java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance("PKIX");
        tmf.init(ts);
        SSLContext client = Contexts.create(Contexts.TLSBRIDGE, "TLS", null, tmf.getTrustManagers());
        int port = Processes.freePort();
        try (Processes.Child server = Processes.start(dir, "openssl", "s_server",
                "-accept", "127.0.0.1:" + port, "-cert", "weak.pem", "-key", "weak.key", "-cipher",
                "DEFAULT:@SECLEVEL=0", "-tls1_2", "-www")) {
            assertTrue(server.await("ACCEPT", 10_000), server.output());
            SSLEngine e = client.createSSLEngine("localhost", port);
            e.setUseClientMode(true);
            try (org.tlsbridge.test.EngineChannel c = new org.tlsbridge.test.EngineChannel(e,
                    java.nio.channels.SocketChannel.open(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(),
                            port)), false)) {
                SSLException x = assertThrows(SSLException.class, c::handshake);
                assertTrue(x.getMessage().contains("ee key too small") && x.getMessage().contains("security level 2 needs 112"),
                        x.getMessage());
            }
        }
    }

    // ---- renegotiation ----

    /**
     * s_client's "R" starts a TLS 1.2 renegotiation: the server answers its
     * ClientHello with a no_renegotiation warning and no ServerHello; OpenSSL
     * as a client takes that as fatal (handshake_failure), and the server
     * engine reports the client's alert. No second handshake happens.
     */
    @Test
    void clientInitiatedRenegotiationRefusedOpenssl() throws Exception {
        try (OneShotServer s = new OneShotServer()) {
            boolean[] renegotiated = new boolean[1];
            CompletableFuture<Void> f = serve(s, null, c -> {
                byte[] first = c.read(6);
                c.write(new String(first, StandardCharsets.US_ASCII).toUpperCase().getBytes(StandardCharsets.US_ASCII));
                byte[] rest = c.read(100); // the renegotiation arrives here
                renegotiated[0] = rest.length > 0;
            });
            // hello, then R (renegotiate: a command only without -ign_eof), then a line that must never arrive
            try (Processes.Child sc = Processes.start("openssl", "s_client", "-connect", "127.0.0.1:" + s.port,
                    "-CAfile", PKI.file("ca.pem").toString(), "-servername", "localhost", "-tls1_2")) {
                OutputStream in = sc.process.getOutputStream();
                in.write(HELLO);
                in.flush();
                assertTrue(sc.await("HELLO", 20_000), "no 'HELLO' within 20000 ms:\n" + sc.output());
                in.write("R\n".getBytes(StandardCharsets.US_ASCII));
                in.flush();
                Throwable t = serverFailure(f);
                try {
                    in.write("after\n".getBytes(StandardCharsets.US_ASCII));
                    in.close();
                } catch (IOException e) {
                    // s_client has gone
                }
                assertTrue(sc.waitFor(20) >= 0, "s_client still running:\n" + sc.output());
                String o = sc.output();
                assertTrue(o.contains("RENEGOTIATING"), o);
                assertTrue(o.contains("no renegotiation"), o);
                assertNotNull(t, "server engine saw no failure:\n" + o);
                assertTrue(t instanceof SSLException, t.toString());
                assertTrue(t.getMessage().contains("handshake failure"), t.getMessage());
                assertFalse(renegotiated[0], "data arrived after the refused renegotiation");
            }
        }
    }

    /**
     * SunJSSE as the client also gives up when its renegotiation is refused
     * (JDK 17: "received handshake warning: no_renegotiation"). Until it
     * reads the warning, data it sends still travels on the first session,
     * and the server's session never changes.
     */
    @Test
    void clientInitiatedRenegotiationRefusedSunJsse() throws Exception {
        try (OneShotServer s = new OneShotServer()) {
            byte[][] ids = new byte[2][];
            CompletableFuture<Void> f = serve(s, null, c -> {
                ECHO_LINE.run(c);
                ids[0] = c.engine.getSession().getId();
                try {
                    c.read(6);
                } finally {
                    ids[1] = c.engine.getSession().getId();
                }
            });
            SSLContext sun = Contexts.create(Contexts.sun(), "TLSv1.2", null, PKI.trustManagers());
            try (SSLSocket sock = (SSLSocket) sun.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(),
                    s.port)) {
                sock.setSoTimeout(20_000);
                sock.setEnabledProtocols(new String[] {"TLSv1.2"});
                sock.startHandshake();
                sock.getOutputStream().write(HELLO);
                assertEquals("HELLO\n", readN(sock.getInputStream(), 6));
                sock.startHandshake(); // renegotiation request
                SSLException x = assertThrows(SSLException.class, () -> {
                    sock.getOutputStream().write("again\n".getBytes(StandardCharsets.US_ASCII));
                    readN(sock.getInputStream(), 6);
                });
                assertTrue(x.getMessage().contains("no_renegotiation"), x.toString());
            }
            Throwable t = serverFailure(f);
            assertTrue(t == null || t instanceof SSLException, String.valueOf(t));
            assertNotNull(ids[1], "server never got past the renegotiation: " + t);
            assertArrayEquals(ids[0], ids[1], "the server's session changed");
        }
    }

    @Test
    void serverRenegotiationRefusedOnTls12() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, false);
        p.client.setEnabledProtocols(new String[] {"TLSv1.2"});
        p.handshake();
        assertEquals("TLSv1.2", p.server.getSession().getProtocol());
        SSLException e = assertThrows(SSLException.class, p.server::beginHandshake);
        assertTrue(e.getMessage().contains("renegotiation"), e.getMessage());
        assertArrayEquals("still up".getBytes(StandardCharsets.US_ASCII),
                p.send(p.client, "still up".getBytes(StandardCharsets.US_ASCII)));
    }

    // ---- bounded records and handshake messages ----

    private static ByteBuffer bytes(int... b) {
        ByteBuffer bb = ByteBuffer.allocate(b.length);
        for (int x : b) {
            bb.put((byte) x);
        }
        return bb.flip();
    }

    /** 2^14 + 2048 + 1: one byte more than any TLS 1.2 record may carry. */
    private static final int OVERSIZE = 16384 + 2048 + 1;

    @ParameterizedTest
    @ValueSource(ints = {22, 23})
    void oversizedRecordBeforeHandshake(int type) throws Exception {
        SSLEngine e = Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine();
        e.setUseClientMode(false);
        ByteBuffer in = ByteBuffer.allocate(64);
        in.put(bytes(type, 3, 3, OVERSIZE >> 8, OVERSIZE & 0xff)).put(new byte[32]).flip();
        SSLException x = assertThrows(SSLException.class, () -> e.unwrap(in, ByteBuffer.allocate(32768)));
        assertTrue(x.getMessage().contains("record overflow"), x.getMessage());
        assertTrue(e.isInboundDone(), "engine closed after the error");
    }

    /**
     * Past TLS 1.2's bound with compression (2^14+2048), and past OpenSSL's
     * own bounds without it, which the engine's framing also applies:
     * 2^14+320 bytes of body in TLS 1.2 (its read buffer with compression
     * off), 2^14+256 in TLS 1.3 (RFC 8446).
     */
    @ParameterizedTest
    @CsvSource({"TLSv1.2,18433", "TLSv1.3,18433", "TLSv1.2,16705", "TLSv1.3,16641"})
    void oversizedRecordAfterHandshake(String protocol, int size) throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), Contexts.server(Contexts.TLSBRIDGE, "rsa"),
                true);
        p.client.setEnabledProtocols(new String[] {protocol});
        p.handshake();
        assertEquals(protocol, p.server.getSession().getProtocol());
        ByteBuffer in = ByteBuffer.allocateDirect(size + 5);
        in.put(bytes(23, 3, 3, size >> 8, size & 0xff)).put(new byte[size]).flip();
        ByteBuffer app = ByteBuffer.allocateDirect(p.server.getSession().getApplicationBufferSize());
        SSLException x = assertThrows(SSLException.class, () -> p.server.unwrap(in, app));
        assertTrue(x.getMessage().contains("record overflow"), x.getMessage());
        // the alert OpenSSL queued goes out: a plain alert record in TLS 1.2
        // (record_overflow, fatal), an encrypted one in TLS 1.3 (2 bytes,
        // content type and 16-byte tag inside an application_data record)
        ByteBuffer out = ByteBuffer.allocate(p.server.getSession().getPacketBufferSize());
        p.server.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        if (protocol.equals("TLSv1.2")) {
            assertEquals(21, out.get(0), "an alert record");
        } else {
            assertEquals(23, out.get(0), "an encrypted record");
            assertEquals(19, out.getShort(3), "of an alert's size");
        }
    }

    /**
     * A ClientHello whose header announces more than OpenSSL's 131396-byte
     * limit is refused as soon as the header is read: no waiting for (or
     * buffering) the announced bytes.
     */
    @ParameterizedTest
    @ValueSource(ints = {131397, 1 << 20, 0xFFFFFF})
    void hugeClientHelloRefusedAtItsHeader(int announced) throws Exception {
        SSLEngine e = Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine();
        e.setUseClientMode(false);
        byte[] body = new byte[16384];
        body[0] = 1; // client_hello
        body[1] = (byte) (announced >> 16);
        body[2] = (byte) (announced >> 8);
        body[3] = (byte) announced;
        body[4] = 3;
        body[5] = 3;
        ByteBuffer in = ByteBuffer.allocate(5 + body.length);
        in.put(bytes(22, 3, 1, body.length >> 8, body.length & 0xff)).put(body).flip();
        SSLException x = assertThrows(SSLException.class, () -> e.unwrap(in, ByteBuffer.allocate(32768)));
        assertTrue(x instanceof javax.net.ssl.SSLHandshakeException, x.toString());
        assertTrue(x.getMessage().contains("handshake message too large (illegal_parameter alert): excessive message size"),
                x.getMessage());
        ByteBuffer out = ByteBuffer.allocate(64);
        e.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        assertTrue(out.remaining() >= 7 && out.get(0) == 21 && out.get(5) == 2 && out.get(6) == 47,
                "fatal illegal_parameter alert expected, got " + out.remaining() + " bytes");
    }

    /** A ClientHello of 60 KiB (padding extension), in four records, is a ClientHello like any other. */
    @Test
    void largeButLegalClientHelloAnswered() throws Exception {
        SSLEngine e = Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine();
        e.setUseClientMode(false);
        byte[] hello = clientHello12(60 * 1024);
        ByteBuffer in = ByteBuffer.allocate(hello.length + 64 * 5);
        for (int off = 0; off < hello.length; off += 16384) {
            int n = Math.min(16384, hello.length - off);
            in.put(bytes(22, 3, 1, n >> 8, n & 0xff)).put(hello, off, n);
        }
        in.flip();
        ByteBuffer app = ByteBuffer.allocate(32768);
        ByteBuffer out = ByteBuffer.allocate(65536);
        for (int i = 0; i < 50 && out.position() == 0; i++) {
            HandshakeStatus hs = e.getHandshakeStatus();
            if (hs == HandshakeStatus.NEED_TASK) {
                Runnable t;
                while ((t = e.getDelegatedTask()) != null) {
                    t.run();
                }
            } else if (hs == HandshakeStatus.NEED_WRAP) {
                e.wrap(ByteBuffer.allocate(0), out);
            } else {
                SSLEngineResult r = e.unwrap(in, app);
                assertNotEquals(SSLEngineResult.Status.CLOSED, r.getStatus(), r.toString());
            }
        }
        assertEquals(0, in.remaining(), "the whole ClientHello was read");
        assertTrue(out.position() > 9, "no answer");
        assertEquals(22, out.get(0));
        assertEquals(2, out.get(5), "ServerHello");
    }

    /** An SSLv2-format ClientHello (what SSLv2Hello clients send) is refused by name, not fed to OpenSSL. */
    @Test
    void sslv2HelloRefused() throws Exception {
        SSLEngine e = Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine();
        e.setUseClientMode(false);
        ByteBuffer in = ByteBuffer.allocate(64);
        in.put(bytes(0x80, 0x2e, 1, 3, 1, 0, 0x15, 0, 0, 0, 0x10)).put(new byte[37]).flip();
        SSLException x = assertThrows(SSLException.class, () -> e.unwrap(in, ByteBuffer.allocate(32768)));
        assertTrue(x.getMessage().contains("SSLv2-format record"), x.getMessage());
    }

    /** TLS 1.2 ClientHello: ECDHE-RSA-AES128-GCM-SHA256, x25519, RSA signatures, padded to about `size` bytes. */
    private static byte[] clientHello12(int size) {
        ByteArrayOutputStream ext = new ByteArrayOutputStream();
        writeExt(ext, 0x000a, new byte[] {0, 2, 0, 0x1d});
        writeExt(ext, 0x000b, new byte[] {1, 0});
        writeExt(ext, 0x000d, new byte[] {0, 4, 0x08, 0x04, 0x04, 0x01});
        writeExt(ext, 0xff01, new byte[] {0});
        writeExt(ext, 0x0017, new byte[0]);
        writeExt(ext, 0x0015, new byte[size - 100]);
        byte[] exts = ext.toByteArray();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(3);
        b.write(3);
        b.writeBytes(new byte[32]); // random
        b.write(0); // session id
        b.writeBytes(new byte[] {0, 2, (byte) 0xc0, 0x2f});
        b.writeBytes(new byte[] {1, 0}); // null compression
        b.write(exts.length >> 8);
        b.write(exts.length);
        b.writeBytes(exts);
        byte[] body = b.toByteArray();
        ByteArrayOutputStream m = new ByteArrayOutputStream();
        m.write(1);
        m.write(body.length >> 16);
        m.write(body.length >> 8);
        m.write(body.length);
        m.writeBytes(body);
        return m.toByteArray();
    }

    private static void writeExt(ByteArrayOutputStream o, int type, byte[] data) {
        o.write(type >> 8);
        o.write(type);
        o.write(data.length >> 8);
        o.write(data.length);
        o.writeBytes(data);
    }

    /** The socket path (OpenSSL reading the descriptor) has the same bounds. */
    @Test
    void socketServerRefusesHugeClientHello() throws Exception {
        SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        try (SSLServerSocket ss = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 5,
                InetAddress.getLoopbackAddress())) {
            CompletableFuture<Throwable> server = CompletableFuture.supplyAsync(() -> {
                try (SSLSocket a = (SSLSocket) ss.accept()) {
                    a.setSoTimeout(20_000);
                    a.startHandshake();
                    return null;
                } catch (IOException e) {
                    return e;
                }
            });
            try (Socket raw = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                raw.setSoTimeout(20_000);
                int announced = 0xFFFFFF;
                raw.getOutputStream().write(new byte[] {22, 3, 1, 0, 10, 1, (byte) (announced >> 16),
                    (byte) (announced >> 8), (byte) announced, 3, 3, 0, 0, 0, 0});
                byte[] alert = raw.getInputStream().readNBytes(7);
                assertArrayEquals(new byte[] {21, 3, 3, 0, 2, 2, 47}, alert, "fatal illegal_parameter");
            }
            Throwable t = server.get(30, TimeUnit.SECONDS);
            assertNotNull(t, "handshake succeeded");
            assertTrue(t.getMessage().contains("excessive message size"), t.toString());
        }
    }

    // ---- helpers ----

    private static String readN(InputStream in, int n) throws IOException {
        return new String(in.readNBytes(n), StandardCharsets.US_ASCII);
    }
}
