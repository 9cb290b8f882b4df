package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.TestPki;

/** The peer's signature schemes as Java names, and the small memo in front of the conversion. */
class SignatureSchemesTest {
    private static final String[] FIREFOX = {"SHA256withECDSA", "SHA384withECDSA", "SHA512withECDSA",
        "RSASSA-PSS", "SHA256withRSA", "SHA384withRSA", "SHA512withRSA", "SHA1withECDSA", "SHA1withRSA"};

    @Test
    void namesInPeerOrderOnceEachUnknownSkipped() {
        int[] firefox = {0x0403, 0x0503, 0x0603, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0203, 0x0201};
        assertArrayEquals(FIREFOX, SignatureSchemes.names(firefox));
        assertArrayEquals(new String[] {"SHA256withRSA", "Ed25519"},
                SignatureSchemes.names(new int[] {0x0401, 0xfefe, 0x0807, 0x0401}));
        assertArrayEquals(new String[0], SignatureSchemes.names(new int[0]));
    }

    @Test
    void sameListAgainIsNotConvertedAgain() {
        int[] list = {0x0403, 0x0804, 0x0401};
        String[] first = SignatureSchemes.names(list);
        assertSame(first, SignatureSchemes.names(new int[] {0x0403, 0x0804, 0x0401}));
        // the memo holds its own copy: the caller's array changing later changes nothing
        list[0] = 0x0807;
        assertArrayEquals(new String[] {"SHA256withECDSA", "RSASSA-PSS", "SHA256withRSA"},
                SignatureSchemes.names(new int[] {0x0403, 0x0804, 0x0401}));
        // another list converts on its own, and the first still converts correctly
        assertArrayEquals(new String[] {"Ed25519", "RSASSA-PSS", "SHA256withRSA"}, SignatureSchemes.names(list));
        assertArrayEquals(new String[] {"SHA256withECDSA", "RSASSA-PSS", "SHA256withRSA"},
                SignatureSchemes.names(new int[] {0x0403, 0x0804, 0x0401}));
    }

    @Test
    void listsTakingTurnsAreEachConvertedOnce() {
        int[][] kinds = {{0x0403, 0x0401}, {0x0804, 0x0401}, {0x0807}, {0x0503, 0x0603}};
        String[][] first = new String[kinds.length][];
        for (int i = 0; i < kinds.length; i++) {
            first[i] = SignatureSchemes.names(kinds[i].clone());
        }
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < kinds.length; i++) {
                assertSame(first[i], SignatureSchemes.names(kinds[i].clone()), "kind " + i);
            }
        }
        assertArrayEquals(new String[] {"SHA384withECDSA", "SHA512withECDSA"}, first[3]);
    }

    @Test
    void sessionsShareNoArrayWithTheirCallers() throws Exception {
        TestPki pki = TestPki.get();
        SSLContext server = Contexts.create(Contexts.TLSBRIDGE, "TLS", pki.keyManagers("ec"), null);
        SSLContext client = Contexts.create(Contexts.TLSBRIDGE, "TLS", null, pki.trustManagers());
        EnginePair a = new EnginePair(client, server, false, null, -1);
        a.handshake();
        EnginePair b = new EnginePair(client, server, false, null, -1);
        b.handshake();
        ExtendedSSLSession sa = (ExtendedSSLSession) a.server.getSession();
        ExtendedSSLSession sb = (ExtendedSSLSession) b.server.getSession();
        String[] expected = sb.getPeerSupportedSignatureAlgorithms();
        assertTrue(expected.length > 3, "the client's schemes: " + java.util.Arrays.toString(expected));
        String[] mine = sa.getPeerSupportedSignatureAlgorithms();
        java.util.Arrays.fill(mine, "changed");
        assertArrayEquals(expected, sb.getPeerSupportedSignatureAlgorithms());
        assertArrayEquals(expected, sa.getPeerSupportedSignatureAlgorithms());
    }
}
