package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.security.Provider;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * Handshake and data both ways, tlsbridge against itself and against
 * SunJSSE on either side, for each suite the provider must carry, with heap
 * and direct buffers and messages at the record-size edges.
 */
class EngineInteropTest {
    private static final int[] SIZES = {0, 1, 16383, 16384, 16385, 1 << 20};

    static Stream<Arguments> cases() {
        String[][] suites = {
            {"TLSv1.3", "TLS_AES_128_GCM_SHA256", "rsa"},
            {"TLSv1.3", "TLS_AES_256_GCM_SHA384", "ec"},
            {"TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "rsa"},
            {"TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "rsa"},
            {"TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "rsa"},
            {"TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ec"},
        };
        String[] pairs = {"tlsbridge-tlsbridge", "tlsbridge-sunjsse", "sunjsse-tlsbridge"};
        List<Arguments> out = new ArrayList<>();
        for (String pair : pairs) {
            for (String[] s : suites) {
                for (boolean direct : new boolean[] {false, true}) {
                    out.add(Arguments.of(pair, s[0], s[1], s[2], direct));
                }
            }
        }
        return out.stream();
    }

    private static Provider provider(String name) {
        return name.equals("tlsbridge") ? Contexts.TLSBRIDGE : Contexts.sun();
    }

    @ParameterizedTest(name = "{0} {1} {2} {3} direct={4}")
    @MethodSource("cases")
    void handshakeAndData(String pair, String protocol, String suite, String key, boolean direct) throws Exception {
        String[] sides = pair.split("-");
        SSLContext clientCtx = Contexts.client(provider(sides[0]));
        SSLContext serverCtx = Contexts.server(provider(sides[1]), key);
        EnginePair p = new EnginePair(clientCtx, serverCtx, direct);
        p.client.setEnabledProtocols(new String[] {protocol});
        p.client.setEnabledCipherSuites(new String[] {suite});
        p.handshake();
        assertEquals(protocol, p.client.getSession().getProtocol());
        assertEquals(protocol, p.server.getSession().getProtocol());
        assertEquals(suite, p.client.getSession().getCipherSuite());
        assertEquals(suite, p.server.getSession().getCipherSuite());
        assertEquals("CN=localhost",
                ((java.security.cert.X509Certificate) p.client.getSession().getPeerCertificates()[0])
                        .getSubjectX500Principal().getName());
        Random rnd = new Random(suite.hashCode());
        for (int size : SIZES) {
            byte[] msg = new byte[size];
            rnd.nextBytes(msg);
            assertArrayEquals(msg, p.send(p.client, msg), "client->server " + size);
            assertArrayEquals(msg, p.send(p.server, msg), "server->client " + size);
        }
        p.close(p.client);
    }
}
