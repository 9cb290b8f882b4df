package org.tlsbridge.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.ClientHellos;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * Key-exchange groups, post-quantum ones included: what tlsbridge offers by
 * default, what SSLParameters.setNamedGroups (JDK 20+) and
 * jdk.tls.namedGroups choose, and the negotiated group as
 * TlsBridgeProvider.negotiatedGroup reports it, against OpenSSL 3.5's
 * s_client/s_server, tlsbridge itself and the running JDK's SunJSSE. Runs on
 * every flavour: with OpenSSL 3.5+ the default is X25519MLKEM768, on the
 * system's 3.0 it is x25519 and the ML-KEM groups are left out.
 */
class GroupsFeaturesTest {
    private static final TestPki PKI = TestPki.get();
    private static final int X25519MLKEM768 = 0x11ec;
    private static final int X25519 = 0x001d;
    private static final MethodHandle SET_NAMED_GROUPS = setter();

    private static MethodHandle setter() {
        try {
            return MethodHandles.publicLookup().findVirtual(SSLParameters.class, "setNamedGroups",
                    MethodType.methodType(void.class, String[].class));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** Whether the OpenSSL serving has the ML-KEM groups (3.5 and later), judged by its version alone. */
    private static boolean pq() {
        String[] v = TlsBridgeProvider.openSslVersion().split("[ .]");
        int major = Integer.parseInt(v[1]);
        return major > 3 || (major == 3 && Integer.parseInt(v[2]) >= 5);
    }

    private static String defaultGroup() {
        return pq() ? "X25519MLKEM768" : "x25519";
    }

    private interface Body {
        void run(Consumer<SSLEngine> groups) throws Exception;
    }

    /**
     * Runs body with a setup that gives an engine these groups: through
     * SSLParameters.setNamedGroups on JDK 20+, through jdk.tls.namedGroups
     * (read when a handshake starts) on 17.
     */
    private static void withGroups(String[] names, Body body) throws Exception {
        if (SET_NAMED_GROUPS != null) {
            body.run(e -> {
                SSLParameters p = e.getSSLParameters();
                try {
                    SET_NAMED_GROUPS.invoke(p, (Object) names);
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
                e.setSSLParameters(p);
            });
            return;
        }
        System.setProperty("jdk.tls.namedGroups", String.join(",", names));
        try {
            body.run(e -> {
            });
        } finally {
            System.clearProperty("jdk.tls.namedGroups");
        }
    }

    private static int[] u16s(byte[] b, int from) {
        int[] out = new int[(b.length - from) / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (b[from + 2 * i] & 0xff) << 8 | (b[from + 2 * i + 1] & 0xff);
        }
        return out;
    }

    /** The groups of a key_share extension body: (group, length, key)*. */
    private static List<Integer> keyShares(byte[] ks) {
        List<Integer> out = new ArrayList<>();
        for (int p = 2; p + 4 <= ks.length; p += 4 + ((ks[p + 2] & 0xff) << 8 | (ks[p + 3] & 0xff))) {
            out.add((ks[p] & 0xff) << 8 | (ks[p + 1] & 0xff));
        }
        return out;
    }

    @Test
    void defaultClientHelloOffersWhatOpensslOffers() throws Exception {
        SSLEngine c = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", 443);
        c.setUseClientMode(true);
        byte[] hello = ClientHellos.first(c);
        int[] groups = u16s(ClientHellos.extension(hello, 10), 2);
        List<Integer> shares = keyShares(ClientHellos.extension(hello, 51));
        if (pq()) {
            assertEquals(X25519MLKEM768, groups[0], Arrays.toString(groups));
            assertEquals(List.of(X25519MLKEM768, X25519), shares);
        } else {
            assertEquals(X25519, groups[0], Arrays.toString(groups));
            assertEquals(List.of(X25519), shares);
            assertFalse(Arrays.stream(groups).anyMatch(g -> g >= 0x0200 && g < 0x1200), Arrays.toString(groups));
        }
    }

    /** The names SunJSSE (and Tomcat) use, in any case; s_client 3.5 asks for exactly that group. */
    @ParameterizedTest
    @CsvSource({"X25519MLKEM768, x25519mlkem768, X25519MLKEM768", "SecP256r1MLKEM768, SECP256R1MLKEM768, SecP256r1MLKEM768",
        "SecP384r1MLKEM1024, SecP384r1MLKEM1024, SecP384r1MLKEM1024", "x25519, X25519, x25519",
        "secp256r1, secp256r1, P-256", "secp384r1, SECP384R1, P-384", "x448, x448, X448"})
    void serverNegotiatesEachNamedGroupWithSClient35(String jsse, String asSet, String opensslName) throws Exception {
        String openssl = OpensslPeers.openssl35();
        AtomicReference<String> seen = new AtomicReference<>();
        boolean available = pq() || !jsse.contains("MLKEM");
        withGroups(new String[] {asSet}, setup -> {
            String out;
            try {
                out = OpensslPeers.sClient(openssl, Contexts.server(Contexts.TLSBRIDGE, "rsa"), setup,
                        c -> seen.set(TlsBridgeProvider.negotiatedGroup(c.engine.getSession())),
                        "-groups", opensslName, "-tls1_3");
            } catch (Exception e) {
                if (available) {
                    throw e;
                }
                // OpenSSL 3.0 has no ML-KEM: the group is left out as SunJSSE leaves out groups it
                // lacks, and a list left empty fails saying why: the handshake (setNamedGroups), or
                // making the engine (jdk.tls.namedGroups, as in SunJSSE)
                Throwable t = e;
                while (t.getCause() != null && !(t instanceof SSLHandshakeException)
                        && !(t instanceof IllegalArgumentException)) {
                    t = t.getCause();
                }
                boolean clear = SET_NAMED_GROUPS != null
                        ? t instanceof SSLHandshakeException && t.getMessage().contains("none of the named groups")
                        : t instanceof IllegalArgumentException
                                && t.getMessage().contains("contains no supported named groups");
                assertTrue(clear && t.getMessage().contains(asSet), String.valueOf(t));
                return;
            }
            assertTrue(available, "a group this OpenSSL lacks was negotiated: " + out);
            assertEquals(jsse, seen.get(), out);
            // s_client 3.5 names a KEM group, and shows a classic one as the server's temporary key
            assertTrue(jsse.contains("MLKEM") ? out.contains("Negotiated TLS1.3 group: " + jsse)
                    : out.contains("Peer Temp Key: "), out);
        });
    }

    @Test
    void sClient35DefaultNegotiatesTheDefaultGroup() throws Exception {
        AtomicReference<String> seen = new AtomicReference<>();
        String out = OpensslPeers.sClient(OpensslPeers.openssl35(), Contexts.server(Contexts.TLSBRIDGE, "rsa"), null,
                c -> seen.set(TlsBridgeProvider.negotiatedGroup(c.engine.getSession())));
        assertEquals(defaultGroup(), seen.get(), out);
        assertTrue(pq() ? out.contains("Negotiated TLS1.3 group: X25519MLKEM768") : out.contains("Peer Temp Key: X25519"),
                out);
    }

    @Test
    void clientNegotiatesWithSServer35() throws Exception {
        int port = Processes.freePort();
        try (Processes.Child s = Processes.start(PKI.dir, OpensslPeers.openssl35(), "s_server", "-accept",
                "127.0.0.1:" + port, "-cert", "rsa.pem", "-key", "rsa.key", "-www",
                "-groups", "SecP384r1MLKEM1024:X25519MLKEM768:X25519")) {
            assertTrue(s.await("ACCEPT", 10_000), s.output());
            assertEquals(defaultGroup(), clientGroup(port, null));
            if (pq()) {
                withGroups(new String[] {"SecP384r1MLKEM1024", "x25519"}, setup ->
                        assertEquals("SecP384r1MLKEM1024", clientGroup(port, setup)));
            }
        }
    }

    private static String clientGroup(int port, Consumer<SSLEngine> setup) throws Exception {
        SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", port);
        e.setUseClientMode(true);
        if (setup != null) {
            setup.accept(e);
        }
        try (EngineChannel c = new EngineChannel(e, SocketChannel.open(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port)), true)) {
            c.handshake();
            return TlsBridgeProvider.negotiatedGroup(e.getSession());
        }
    }

    @Test
    void tlsbridgePeersReportTheGroupAndNoneForAResumedTls12Session() throws Exception {
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        EnginePair p = new EnginePair(client, server, true, "localhost", 8443);
        p.handshake();
        assertEquals(defaultGroup(), TlsBridgeProvider.negotiatedGroup(p.client.getSession()));
        assertEquals(defaultGroup(), TlsBridgeProvider.negotiatedGroup(p.server.getSession()));
        // a resumed TLS 1.3 session makes its own (EC)DHE exchange
        p.send(p.server, new byte[] {1}); // the tickets reach the client
        EnginePair again = new EnginePair(client, server, true, "localhost", 8443);
        again.handshake();
        assertTrue(TlsBridgeProvider.isResumed(again.server.getSession()));
        assertEquals(defaultGroup(), TlsBridgeProvider.negotiatedGroup(again.server.getSession()));

        // TLS 1.2 has no hybrid groups: x25519 in full, nothing when resumed
        EnginePair t12 = new EnginePair(client, server, true, "localhost", 8444);
        t12.client.setEnabledProtocols(new String[] {"TLSv1.2"});
        t12.handshake();
        assertEquals("x25519", TlsBridgeProvider.negotiatedGroup(t12.client.getSession()));
        assertEquals("x25519", TlsBridgeProvider.negotiatedGroup(t12.server.getSession()));
        EnginePair resumed = new EnginePair(client, server, true, "localhost", 8444);
        resumed.client.setEnabledProtocols(new String[] {"TLSv1.2"});
        resumed.handshake();
        assertTrue(TlsBridgeProvider.isResumed(resumed.server.getSession()));
        assertNull(TlsBridgeProvider.negotiatedGroup(resumed.server.getSession()));
        assertNull(TlsBridgeProvider.negotiatedGroup(resumed.client.getSession()));
        assertNull(TlsBridgeProvider.negotiatedGroup(Contexts.client(Contexts.sun()).createSSLEngine().getSession()));
    }

    /**
     * The running JDK's SunJSSE: JDK 17 and 25 (Temurin 25.0.3) offer no
     * ML-KEM group, so both directions fall back to x25519 without a
     * HelloRetryRequest; a JDK whose SunJSSE offers X25519MLKEM768 gets it
     * from an OpenSSL that has it. The test prints which case ran.
     */
    @Test
    void sunJsseGetsPqWhenItOffersItElseClassicFallback() throws Exception {
        SSLEngine probe = Contexts.client(Contexts.sun()).createSSLEngine();
        boolean sunPq = sunOffersPq(probe);
        String want = sunPq && pq() ? "X25519MLKEM768" : "x25519";
        System.out.println("SunJSSE on JDK " + Runtime.version() + (sunPq ? " offers" : " does not offer")
                + " X25519MLKEM768; expecting " + want + " (OpenSSL: " + TlsBridgeProvider.openSslVersion() + ")");

        EnginePair sunClient = new EnginePair(Contexts.client(Contexts.sun()),
                Contexts.server(Contexts.TLSBRIDGE, "rsa"), true);
        sunClient.handshake();
        assertEquals(want, TlsBridgeProvider.negotiatedGroup(sunClient.server.getSession()));

        EnginePair sunServer = new EnginePair(Contexts.client(Contexts.TLSBRIDGE),
                Contexts.server(Contexts.sun(), "rsa"), true);
        sunServer.handshake();
        assertEquals(want, TlsBridgeProvider.negotiatedGroup(sunServer.client.getSession()));
    }

    private static boolean sunOffersPq(SSLEngine sun) throws Exception {
        sun.setUseClientMode(true);
        byte[] hello = ClientHellos.first(sun);
        return Arrays.stream(u16s(ClientHellos.extension(hello, 10), 2)).anyMatch(g -> g == X25519MLKEM768);
    }

    /** SSLParameters' javadoc: providers ignore unknown names; SunJSSE 25 does (setNamedGroups accepts them). */
    @Test
    void unknownNamesAreLeftOutAsSunJsseDoes() throws Exception {
        withGroups(new String[] {"no-such-group", "x25519"}, setup -> {
            AtomicReference<String> seen = new AtomicReference<>();
            OpensslPeers.sClient(OpensslPeers.openssl35(), Contexts.server(Contexts.TLSBRIDGE, "rsa"), setup,
                    c -> seen.set(TlsBridgeProvider.negotiatedGroup(c.engine.getSession())));
            assertEquals("x25519", seen.get());
        });
    }

    /** A list with no usable group: the handshake fails at once and says why (SunJSSE sends no key share). */
    @Test
    void noUsableGroupFailsTheHandshakeClearly() throws Exception {
        if (SET_NAMED_GROUPS == null) {
            System.out.println("JDK " + Runtime.version() + " has no SSLParameters.setNamedGroups: "
                    + "jdkPropertyWithNoUsableGroupIsIllegal covers this JDK");
            return;
        }
        withGroups(new String[] {"no-such-group"}, setup -> {
            SSLEngine c = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", 443);
            c.setUseClientMode(true);
            setup.accept(c);
            SSLHandshakeException e = assertThrows(SSLHandshakeException.class, () -> ClientHellos.first(c));
            assertTrue(e.getMessage().contains("none of the named groups [no-such-group]"), e.getMessage());
        });
    }

    /** SunJSSE: jdk.tls.namedGroups naming no supported group is an IllegalArgumentException when engines are made. */
    @Test
    void jdkPropertyWithNoUsableGroupIsIllegal() {
        SSLContext ctx = Contexts.client(Contexts.TLSBRIDGE);
        System.setProperty("jdk.tls.namedGroups", pq() ? "no-such-group" : "no-such-group,X25519MLKEM768");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ctx::createSSLEngine);
            assertTrue(e.getMessage().contains("contains no supported named groups"), e.getMessage());
        } finally {
            System.clearProperty("jdk.tls.namedGroups");
        }
        ctx.createSSLEngine(); // and the next engine, once the property is fixed, is fine
    }

    @Test
    void supportedParametersListTheGroupsThisOpensslHas() throws Exception {
        if (SET_NAMED_GROUPS == null) {
            return; // SSLParameters carries no groups before JDK 20
        }
        SSLParameters p = Contexts.client(Contexts.TLSBRIDGE).getSupportedSSLParameters();
        List<String> g = Arrays.asList((String[]) SSLParameters.class.getMethod("getNamedGroups").invoke(p));
        assertTrue(g.contains("x25519") && g.contains("secp256r1"), g.toString());
        assertEquals(pq(), g.contains("X25519MLKEM768") && g.contains("SecP256r1MLKEM768")
                && g.contains("SecP384r1MLKEM1024"), g.toString());
    }
}
