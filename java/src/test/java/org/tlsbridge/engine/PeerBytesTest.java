package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIMatcher;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.StandardConstants;
import javax.net.ssl.X509ExtendedKeyManager;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.ClientHellos;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.OneShotServer;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * Bytes the peer chooses (server names, ALPN names, signature-algorithm
 * lists) reaching a tlsbridge server engine: exactly as sent, or refused
 * with an SSLException and an alert, never an IllegalArgumentException.
 */
class PeerBytesTest {
    private static final TestPki PKI = TestPki.get();

    /**
     * Legal in DNS, but SNIHostName refuses it from bytes too (IDN's STD3
     * rules), so SunJSSE answers illegal_parameter; so does tlsbridge.
     */
    private static final byte[] UNDERSCORE = "_acme-challenge.host_name.example".getBytes(StandardCharsets.US_ASCII);
    /** UTF-8, as RFC 6066 allows and SunJSSE accepts; bytes >= 0x80. */
    private static final byte[] UTF8 = "b\u00fccher.example".getBytes(StandardCharsets.UTF_8);

    private static byte[] name(String which) {
        switch (which) {
            case "underscore": return UNDERSCORE;
            case "utf8": return UTF8;
            case "badUtf8": return new byte[] {'a', (byte) 0xff, '.', 'e', 'x', 'a', 'm', 'p', 'l', 'e'};
            case "hyphen": return "a.-b.example".getBytes(StandardCharsets.US_ASCII);
            case "trailingHyphen": return "a.b-.example".getBytes(StandardCharsets.US_ASCII);
            case "longLabel": return ("x".repeat(64) + ".example").getBytes(StandardCharsets.US_ASCII);
            case "tooLong": return ("abcdefghi.".repeat(30) + "example").getBytes(StandardCharsets.US_ASCII);
            default: throw new IllegalArgumentException(which);
        }
    }

    /** Records every host name it is shown, as bytes, and accepts it. */
    static final class Recorder extends SNIMatcher {
        final List<byte[]> seen = Collections.synchronizedList(new ArrayList<>());

        Recorder() {
            super(StandardConstants.SNI_HOST_NAME);
        }

        @Override
        public boolean matches(SNIServerName name) {
            seen.add(name.getEncoded());
            return true;
        }
    }

    private static void matcher(SSLEngine server, Recorder r) {
        if (r != null) {
            SSLParameters p = server.getSSLParameters();
            p.setSNIMatchers(List.of(r));
            server.setSSLParameters(p);
        }
    }

    private static byte[] requested(SSLEngine e) {
        return requested(e.getSession());
    }

    private static byte[] requested(javax.net.ssl.SSLSession session) {
        List<SNIServerName> names = ((ExtendedSSLSession) session).getRequestedServerNames();
        assertEquals(1, names.size(), names.toString());
        return names.get(0).getEncoded();
    }

    // ---- server names from a tlsbridge client: full and resumed handshakes ----

    /** A UTF-8 name (bytes >= 0x80) set as SNIHostName(byte[]) is sent, matched and reported as those bytes. */
    @ParameterizedTest
    @CsvSource({"TLSv1.2,false", "TLSv1.3,false", "TLSv1.2,true", "TLSv1.3,true"})
    void serverNameBytesFromTlsbridgeClient(String protocol, boolean withMatcher) throws Exception {
        byte[] name = UTF8;
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        for (int round = 0; round < 2; round++) {
            EnginePair p = new EnginePair(client, server, true, "localhost", 8443);
            p.client.setEnabledProtocols(new String[] {protocol});
            SSLParameters cp = p.client.getSSLParameters();
            cp.setServerNames(List.of(new SNIHostName(name)));
            p.client.setSSLParameters(cp);
            Recorder r = withMatcher ? new Recorder() : null;
            matcher(p.server, r);
            p.handshake();
            p.send(p.server, new byte[10]); // a TLS 1.3 ticket rides along with data
            assertEquals(round == 1, TlsBridgeProvider.isResumed(p.server.getSession()), "round " + round);
            assertArrayEquals(name, requested(p.server), "round " + round);
            if (r != null) {
                assertEquals(1, r.seen.size());
                assertArrayEquals(name, r.seen.get(0));
            }
        }
    }

    // ---- server names in crafted ClientHellos ----

    private static EnginePair pair(SSLContext client, SSLContext server, String protocol) {
        EnginePair p = new EnginePair(client, server, true, "localhost", 8443);
        p.client.setEnabledProtocols(new String[] {protocol});
        return p;
    }

    /** Names even SNIHostName(byte[]) refuses, or longer than DNS allows: an alert and an SSLException. */
    @ParameterizedTest
    @CsvSource({"TLSv1.2,underscore", "TLSv1.3,underscore", "TLSv1.2,badUtf8", "TLSv1.3,badUtf8", "TLSv1.2,hyphen",
        "TLSv1.3,trailingHyphen", "TLSv1.2,longLabel", "TLSv1.3,longLabel", "TLSv1.2,tooLong", "TLSv1.3,tooLong"})
    void unusableServerNameIsAnSslException(String protocol, String which) throws Exception {
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        EnginePair first = pair(client, server, protocol);
        first.handshake();
        first.send(first.server, new byte[10]);
        for (boolean resuming : new boolean[] {false, true}) {
            for (boolean withMatcher : new boolean[] {false, true}) {
                // a resuming client offers the session it has; a fresh context offers none
                EnginePair p = pair(resuming ? client : Contexts.client(Contexts.TLSBRIDGE), server, protocol);
                Recorder r = withMatcher ? new Recorder() : null;
                matcher(p.server, r);
                byte[] hello = ClientHellos.withExtension(ClientHellos.first(p.client), ClientHellos.SERVER_NAME,
                        ClientHellos.serverName(name(which)));
                ClientHellos.Outcome o = ClientHellos.feed(p.server, hello);
                String what = which + " resuming=" + resuming + " matcher=" + withMatcher + ": " + o;
                assertNotNull(o.failure, what);
                assertTrue(o.failure instanceof SSLException, what);
                int alert = o.alert();
                assertEquals("tooLong".equals(which) ? 112 : 47, alert, "illegal_parameter or unrecognized_name: " + what);
                if (r != null) {
                    assertEquals(0, r.seen.size(), what);
                }
            }
        }
    }

    /** Names SunJSSE accepts arrive as sent, also when no stock client could send them. */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void craftedServerNameReachesMatcher(String protocol) throws Exception {
        String which = "utf8";
        EnginePair p = pair(Contexts.client(Contexts.TLSBRIDGE), Contexts.server(Contexts.TLSBRIDGE, "rsa"), protocol);
        Recorder r = new Recorder();
        matcher(p.server, r);
        byte[] hello = ClientHellos.withExtension(ClientHellos.first(p.client), ClientHellos.SERVER_NAME,
                ClientHellos.serverName(name(which)));
        ClientHellos.Outcome o = ClientHellos.feed(p.server, hello);
        assertNull(o.failure, o.toString());
        assertEquals(2, o.firstHandshakeType(), o.toString());
        assertEquals(1, r.seen.size());
        assertArrayEquals(name(which), r.seen.get(0));
    }

    // ---- server names from openssl s_client ----

    /** openssl s_client with -servername set to exactly these bytes (printf makes them: no Java string between). */
    private static Processes.Run sClient(int port, String flag, byte[] name, String... extra) throws Exception {
        StringBuilder octal = new StringBuilder();
        for (byte b : name) {
            octal.append(String.format("\\%03o", b & 0xff));
        }
        String sh = "exec openssl s_client -connect 127.0.0.1:" + port + " -CAfile " + PKI.file("ca.pem") + " -ign_eof "
                + flag + " " + String.join(" ", extra) + " -servername \"$(printf '" + octal + "')\"";
        return Processes.run("hello\n".getBytes(StandardCharsets.US_ASCII), 30, List.of("sh", "-c", sh));
    }

    private static final OneShotServer.Exchange UPPER = c -> {
        byte[] in = c.read(6);
        c.write(new String(in, StandardCharsets.US_ASCII).toUpperCase().getBytes(StandardCharsets.US_ASCII));
    };

    /** A UTF-8 name from s_client, full then resumed: the matcher and the session see the bytes. */
    @ParameterizedTest
    @ValueSource(strings = {"-tls1_2", "-tls1_3"})
    void serverNameFromOpensslClient(String flag) throws Exception {
        Path sess = Files.createTempFile("sclient", ".sess");
        List<byte[]> seen = Collections.synchronizedList(new ArrayList<>());
        List<Boolean> resumed = Collections.synchronizedList(new ArrayList<>());
        try (OneShotServer s = new OneShotServer()) {
            Recorder r = new Recorder();
            CompletableFuture<Void> f = s.serve(Contexts.server(Contexts.TLSBRIDGE, "rsa"), 2, true,
                    e -> matcher(e, r), c -> {
                        UPPER.run(c);
                        seen.add(requested(c.engine));
                        resumed.add(TlsBridgeProvider.isResumed(c.engine.getSession()));
                    });
            for (String sessArg : new String[] {"-sess_out", "-sess_in"}) {
                Processes.Run run = sClient(s.port, flag, UTF8, sessArg, sess.toString());
                assertTrue(run.out.contains("HELLO"), run.toString());
            }
            f.get(30, TimeUnit.SECONDS);
            assertEquals(2, r.seen.size());
            for (int i = 0; i < 2; i++) {
                assertArrayEquals(UTF8, r.seen.get(i));
                assertArrayEquals(UTF8, seen.get(i));
            }
            assertEquals(List.of(false, true), resumed);
        } finally {
            Files.deleteIfExists(sess);
        }
    }

    /** What a JSSE application does after a failed unwrap: wrap once more and send the alert. */
    private static void sendAlert(SSLEngine e, SocketChannel ch) {
        try {
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(e.getSession().getPacketBufferSize());
            e.wrap(java.nio.ByteBuffer.allocate(0), out);
            out.flip();
            while (out.hasRemaining()) {
                ch.write(out);
            }
        } catch (Exception ignored) {
            // the failure itself is what the test judges
        }
    }

    /** '_' from s_client, in a full handshake and in one offering a session: illegal_parameter, as SunJSSE. */
    @ParameterizedTest
    @ValueSource(strings = {"-tls1_2", "-tls1_3"})
    void underscoreFromOpensslClientIsRefused(String flag) throws Exception {
        Path sess = Files.createTempFile("sclient", ".sess");
        List<Throwable> outcomes = Collections.synchronizedList(new ArrayList<>());
        SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
            Thread server = new Thread(() -> {
                for (int i = 0; i < 3; i++) {
                    try (SocketChannel ch = ss.accept()) {
                        SSLEngine e = ctx.createSSLEngine();
                        e.setUseClientMode(false);
                        EngineChannel c = new EngineChannel(e, ch, true);
                        try {
                            c.handshake();
                            UPPER.run(c);
                            outcomes.add(null);
                        } catch (Exception ex) {
                            outcomes.add(ex);
                            sendAlert(e, ch);
                        }
                    } catch (Exception ex) {
                        outcomes.add(ex);
                    }
                }
            }, "underscore-server");
            server.setDaemon(true);
            server.start();
            // a session to offer, from a name everyone accepts
            Processes.Run ok = sClient(port, flag, "localhost".getBytes(StandardCharsets.US_ASCII), "-sess_out",
                    sess.toString());
            assertTrue(ok.out.contains("HELLO"), ok.toString());
            for (String extra : new String[] {"", "-sess_in " + sess}) {
                Processes.Run run = sClient(port, flag, UNDERSCORE, extra);
                assertFalse(run.out.contains("HELLO"), run.toString());
                assertTrue(run.out.contains("alert illegal parameter"), run.toString());
            }
            server.join(30_000);
            assertEquals(3, outcomes.size(), outcomes.toString());
            assertNull(outcomes.get(0));
            for (Throwable t : outcomes.subList(1, 3)) {
                assertTrue(t instanceof SSLException, String.valueOf(t));
            }
        } finally {
            Files.deleteIfExists(sess);
        }
    }

    // ---- ALPN names with bytes >= 0x80, as SunJSSE maps them (ISO-8859-1) ----

    /**
     * One byte per char on the wire: C3 A9 is also the (modified) UTF-8 of
     * U+00E9, so a decoder that is not ISO-8859-1 turns it into one char.
     */
    private static final String LATIN = "\u00c3\u00a9t\u00e9/\u00fc";

    @ParameterizedTest
    @CsvSource({"tlsbridge,tlsbridge,false", "tlsbridge,tlsbridge,true", "sun,tlsbridge,false", "sun,tlsbridge,true",
        "tlsbridge,sun,false", "tlsbridge,sun,true"})
    void alpnNamesWithHighBytes(String clientProvider, String serverProvider, boolean selector) throws Exception {
        SSLContext client = Contexts.client("sun".equals(clientProvider) ? Contexts.sun() : Contexts.TLSBRIDGE);
        SSLContext server = Contexts.server("sun".equals(serverProvider) ? Contexts.sun() : Contexts.TLSBRIDGE, "rsa");
        EnginePair p = new EnginePair(client, server, false);
        SSLParameters cp = p.client.getSSLParameters();
        cp.setApplicationProtocols(new String[] {"h2", LATIN});
        p.client.setSSLParameters(cp);
        List<String> offered = new ArrayList<>();
        if (selector) {
            p.server.setHandshakeApplicationProtocolSelector((e, list) -> {
                offered.addAll(list);
                return LATIN;
            });
        } else {
            SSLParameters sp = p.server.getSSLParameters();
            sp.setApplicationProtocols(new String[] {LATIN, "http/1.1"});
            p.server.setSSLParameters(sp);
        }
        p.handshake();
        assertEquals(LATIN, p.client.getApplicationProtocol());
        assertEquals(LATIN, p.server.getApplicationProtocol());
        if (selector) {
            assertEquals(List.of("h2", LATIN), offered);
        }
    }

    /** A client's ALPN list of 1,290 bytes reaches the selector whole (it was dropped past 512). */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void longAlpnOfferReachesSelector(String protocol) throws Exception {
        EnginePair p = pair(Contexts.client(Contexts.TLSBRIDGE), Contexts.server(Contexts.TLSBRIDGE, "rsa"), protocol);
        java.io.ByteArrayOutputStream wire = new java.io.ByteArrayOutputStream();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 129; i++) {
            String n = String.format("proto-%03d", i);
            names.add(n);
            wire.write(n.length());
            wire.writeBytes(n.getBytes(StandardCharsets.US_ASCII));
        }
        byte[] list = wire.toByteArray();
        byte[] ext = new byte[list.length + 2];
        ext[0] = (byte) (list.length >> 8);
        ext[1] = (byte) list.length;
        System.arraycopy(list, 0, ext, 2, list.length);
        List<String> offered = new ArrayList<>();
        p.server.setHandshakeApplicationProtocolSelector((e, l) -> {
            offered.addAll(l);
            return "proto-128";
        });
        ClientHellos.Outcome o = ClientHellos.feed(p.server,
                ClientHellos.withExtension(ClientHellos.first(p.client), ClientHellos.ALPN, ext));
        assertNull(o.failure, o.toString());
        assertEquals(2, o.firstHandshakeType(), "ServerHello: " + o);
        assertEquals(names, offered);
        assertEquals("proto-128", p.server.getHandshakeApplicationProtocol());
    }

    /** Both through the native-descriptor sockets, whose own handshake loop runs the ClientHello task. */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void serverNameAndAlpnBytesOnNativeSockets(String protocol) throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        List<Object> seen = Collections.synchronizedList(new ArrayList<>());
        try (javax.net.ssl.SSLServerSocket ss = (javax.net.ssl.SSLServerSocket) server.getServerSocketFactory()
                .createServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 2; i++) {
                    try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ss.accept()) {
                        SSLParameters sp = s.getSSLParameters();
                        sp.setApplicationProtocols(new String[] {LATIN, "http/1.1"});
                        s.setSSLParameters(sp);
                        assertEquals(1, s.getInputStream().read());
                        seen.add(requested(s.getSession()));
                        seen.add(s.getApplicationProtocol());
                        seen.add(TlsBridgeProvider.isResumed(s.getSession()));
                        s.getOutputStream().write(2);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            }, r -> {
                Thread t = new Thread(r, "socket-server");
                t.setDaemon(true);
                t.start();
            });
            for (int i = 0; i < 2; i++) {
                try (javax.net.ssl.SSLSocket c = (javax.net.ssl.SSLSocket) client.getSocketFactory()
                        .createSocket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                    SSLParameters p = c.getSSLParameters();
                    p.setApplicationProtocols(new String[] {"h2", LATIN});
                    p.setServerNames(List.of(new SNIHostName(UTF8)));
                    c.setSSLParameters(p);
                    c.setEnabledProtocols(new String[] {protocol});
                    c.getOutputStream().write(1);
                    assertEquals(2, c.getInputStream().read());
                    assertEquals(LATIN, c.getApplicationProtocol());
                }
            }
            done.get(30, TimeUnit.SECONDS);
        }
        assertEquals(6, seen.size());
        for (int i = 0; i < 2; i++) {
            assertArrayEquals(UTF8, (byte[]) seen.get(3 * i), "connection " + i);
            assertEquals(LATIN, seen.get(3 * i + 1), "connection " + i);
            assertEquals(i == 1, seen.get(3 * i + 2), "connection " + i + " resumed");
        }
    }

    // ---- long signature-algorithm lists ----

    /** n code points no TLS stack defines (the server can use none of them), then the given ones. */
    private static int[] unusable(int n, int... last) {
        int[] codes = Arrays.copyOf(new int[0], n + last.length);
        for (int i = 0; i < n; i++) {
            codes[i] = 0x1000 + i;
        }
        System.arraycopy(last, 0, codes, n, last.length);
        return codes;
    }

    /**
     * 32,000 schemes, the last two the only usable ones: rsa_pss_rsae_sha256
     * to sign the handshake (the only one TLS 1.3 may use with an RSA key) and
     * rsa_pkcs1_sha256, what the chain is signed with, which the key manager
     * checks the chain against (the client sends no signature_algorithms_cert).
     */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void usableSchemeLateInALongList(String protocol) throws Exception {
        EnginePair p = pair(Contexts.client(Contexts.TLSBRIDGE), Contexts.server(Contexts.TLSBRIDGE, "rsa"), protocol);
        byte[] hello = ClientHellos.withExtension(ClientHellos.first(p.client), ClientHellos.SIGNATURE_ALGORITHMS,
                ClientHellos.schemes(unusable(31_998, 0x0804, 0x0401)));
        assertTrue(hello.length > 64_000);
        ClientHellos.Outcome o = ClientHellos.feed(p.server, hello);
        assertNull(o.failure, o.toString());
        assertEquals(2, o.firstHandshakeType(), "ServerHello: " + o);
        assertEquals(HandshakeStatus.NEED_UNWRAP, o.status, "the server's whole flight went out: " + o);
        assertEquals(protocol, p.server.getHandshakeSession().getProtocol());
    }

    /** Asks the real key manager, noting what the handshake session says the client accepts. */
    static final class Watching extends X509ExtendedKeyManager {
        final X509ExtendedKeyManager km;
        final List<String> peerAlgorithms = Collections.synchronizedList(new ArrayList<>());

        Watching(X509ExtendedKeyManager km) {
            this.km = km;
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            peerAlgorithms.addAll(Arrays.asList(
                    ((ExtendedSSLSession) engine.getHandshakeSession()).getPeerSupportedSignatureAlgorithms()));
            return km.chooseEngineServerAlias(keyType, issuers, engine);
        }

        // a server engine asks nothing else: client and socket methods stay unanswered
        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return km.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return km.getPrivateKey(alias);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void wholeSignatureAlgorithmsCertReachesKeyManager(String protocol) throws Exception {
        Watching km = new Watching((X509ExtendedKeyManager) PKI.keyManagers("rsa")[0]);
        SSLContext server = Contexts.create(Contexts.TLSBRIDGE, "TLS", new KeyManager[] {km}, PKI.trustManagers());
        EnginePair p = pair(Contexts.client(Contexts.TLSBRIDGE), server, protocol);
        // 59 unknown schemes, then rsa_pkcs1_sha256: what the test CA signed the chain with
        byte[] hello = ClientHellos.withExtension(ClientHellos.first(p.client),
                ClientHellos.SIGNATURE_ALGORITHMS_CERT, ClientHellos.schemes(unusable(59, 0x0401)));
        ClientHellos.Outcome o = ClientHellos.feed(p.server, hello);
        assertNull(o.failure, o.toString());
        assertEquals(2, o.firstHandshakeType(), "ServerHello: " + o);
        assertFalse(km.peerAlgorithms.isEmpty(), "the key manager was asked");
        assertTrue(km.peerAlgorithms.contains("SHA256withRSA"), km.peerAlgorithms.toString());
    }
}
