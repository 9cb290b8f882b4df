package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.Provider;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * setEnabledProtocols with names of protocols tlsbridge does not speak
 * (SSLv2Hello, SSLv3, TLSv1, TLSv1.1), as SunJSSE treats the ones it has
 * disabled: the names are kept and reported, never negotiated; a list of only
 * those fails its handshake naming them (SSLHandshakeException) instead of
 * leaving an empty list behind; an unknown name is an
 * IllegalArgumentException. Engine, native socket, layered socket, server
 * socket; both providers. OpenJDK's TLS/TestJSSEClientDefaultProtocol.
 */
@Timeout(60)
class LegacyProtocolNamesTest {
    private static final String[] LEGACY = {"SSLv2Hello", "SSLv3", "TLSv1"};
    private static final String[] MIXED = {"TLSv1", "TLSv1.1", "TLSv1.2"};

    private static Provider provider(String name) {
        return "SunJSSE".equals(name) ? Contexts.sun() : Contexts.TLSBRIDGE;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"TLSBridge", "SunJSSE"})
    void namesAreKeptOnEveryKind(String provider) throws Exception {
        SSLContext ctx = Contexts.server(provider(provider), "rsa");
        SSLEngine e = ctx.createSSLEngine();
        e.setEnabledProtocols(LEGACY);
        assertArrayEquals(LEGACY, e.getEnabledProtocols());
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket();
                SSLServerSocket ss = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket();
                Socket raw = new Socket()) {
            s.setEnabledProtocols(LEGACY);
            assertArrayEquals(LEGACY, s.getEnabledProtocols());
            ss.setEnabledProtocols(LEGACY);
            assertArrayEquals(LEGACY, ss.getEnabledProtocols());
            assertThrows(IllegalArgumentException.class, () -> s.setEnabledProtocols(new String[] {"TLSv1.4"}));
            assertThrows(IllegalArgumentException.class, () -> ss.setEnabledProtocols(new String[] {"SSLv4"}));
        }
        assertThrows(IllegalArgumentException.class, () -> e.setEnabledProtocols(new String[] {"TLSv9"}));
        assertArrayEquals(LEGACY, e.getEnabledProtocols(), "a refused call leaves the list as it was");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"TLSBridge", "SunJSSE"})
    void onlyLegacyNamesFailTheHandshakeByName(String provider) throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        SSLEngine e = client.createSSLEngine("localhost", 443);
        e.setUseClientMode(true);
        e.setEnabledProtocols(LEGACY);
        SSLHandshakeException x = assertThrows(SSLHandshakeException.class, () -> {
            e.beginHandshake();
            e.wrap(ByteBuffer.allocate(0), ByteBuffer.allocate(e.getSession().getPacketBufferSize()));
        });
        assertTrue(x.getMessage().contains("No appropriate protocol"), x.getMessage());
        if (provider.equals("TLSBridge")) {
            assertTrue(x.getMessage().contains("[SSLv2Hello, SSLv3, TLSv1]"), x.getMessage());
        }
        try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            for (String kind : new String[] {"native", "layered"}) {
                Socket raw = kind.equals("layered") ? new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())
                        : null;
                try (SSLSocket s = raw != null
                        ? (SSLSocket) client.getSocketFactory().createSocket(raw, "localhost", ss.getLocalPort(),
                                true)
                        : (SSLSocket) client.getSocketFactory().createSocket("localhost", ss.getLocalPort());
                        Socket accepted = ss.accept()) {
                    s.setEnabledProtocols(LEGACY);
                    SSLHandshakeException y = assertThrows(SSLHandshakeException.class, s::startHandshake, kind);
                    assertTrue(y.getMessage().contains("No appropriate protocol"), kind + ": " + y.getMessage());
                    if (provider.equals("TLSBridge")) {
                        s.close();
                        accepted.setSoTimeout(5000);
                        try {
                            assertEquals(-1, accepted.getInputStream().read(), kind + ": nothing was sent");
                        } catch (IOException reset) {
                            // closed without a byte either way
                        }
                    }
                }
            }
        }
    }

    /** Old names next to TLSv1.2: kept in the list, TLS 1.2 negotiated. */
    @ParameterizedTest(name = "client {0}, server {1}")
    @CsvSource({"TLSBridge, TLSBridge", "TLSBridge, SunJSSE", "SunJSSE, TLSBridge"})
    void mixedListNegotiatesWhatItCan(String client, String server) throws Exception {
        EnginePair p = new EnginePair(Contexts.client(provider(client)), Contexts.server(provider(server), "rsa"),
                false);
        p.client.setEnabledProtocols(MIXED);
        p.server.setEnabledProtocols(MIXED);
        assertArrayEquals(MIXED, p.client.getEnabledProtocols());
        p.handshake();
        assertEquals("TLSv1.2", p.client.getSession().getProtocol());
        assertEquals("TLSv1.2", p.server.getSession().getProtocol());
    }
}
