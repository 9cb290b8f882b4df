package org.tlsbridge.context;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeConstants;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * {@code -Dtlsbridge.seal=false}: a context whose engines leave sealing the
 * records they send to OpenSSL's record layer (docs/record-path.md), for a
 * peer that ever disagrees with the engine's own sealing. The option bit is
 * what tests/native/test_seal.c shows the engines follow.
 */
class SealSwitchTest {
    private static boolean sealingOpenSsl() {
        // the versions native/core/seal.c takes keys from
        String v = TlsBridgeProvider.openSslVersion();
        return v.startsWith("OpenSSL 3.5.") || v.startsWith("OpenSSL 4.0.");
    }

    private static boolean sealOption(String property) throws Exception {
        if (property != null) {
            System.setProperty("tlsbridge.seal", property);
        }
        try {
            ContextState s = new ContextState("TLS", Managers.keyManager(null), Managers.trustManager(null), null,
                    null, null);
            return (Native.ctxOptions(s.handle(), 0, 0) & NativeConstants.SSL_OP_ENABLE_KTLS) != 0;
        } finally {
            System.clearProperty("tlsbridge.seal");
        }
    }

    @Test
    void propertyClearsTheOption() throws Exception {
        assertEquals(sealingOpenSsl(), sealOption(null), "sealing where the OpenSSL allows it, by default");
        assertEquals(sealingOpenSsl(), sealOption("true"));
        assertEquals(false, sealOption("false"), "-Dtlsbridge.seal=false clears the option");
        assertEquals(false, sealOption("FALSE"));
    }

    @ParameterizedTest
    @CsvSource({"TLSv1.2", "TLSv1.3"})
    void enginesStillTalkToSunJsse(String protocol) throws Exception {
        SSLContext server = Contexts.serverWith("tlsbridge.seal", "false", "rsa");
        EnginePair p = new EnginePair(Contexts.client(Contexts.sun()), server, false);
        p.client.setEnabledProtocols(new String[] {protocol});
        p.handshake();
        assertEquals(protocol, p.server.getSession().getProtocol());
        byte[] data = new byte[40000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31 + 7);
        }
        assertArrayEquals(data, p.send(p.server, data), "OpenSSL's records reach SunJSSE");
        assertArrayEquals(data, p.send(p.client, data));
    }
}
