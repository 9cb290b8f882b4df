package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.security.Provider;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLProtocolException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;

/**
 * What unwrap does with a header that is not all there and with bytes that
 * are no TLS record, the JSSE javadoc being silent: as SunJSSE does. A
 * fragment of a TLS or an SSLv2-format header is BUFFER_UNDERFLOW (nothing
 * read, the engine still waits for the server); junk of a record's length
 * is an SSLProtocolException. OpenJDK's SSLEngine/Basics in this order.
 */
class PartialRecordTest {
    private static final byte[] SHORT_HEADER = {0x16, 0x03, 0x01, 0x05};
    private static final byte[] SHORT_RECORD = {0x16, 0x03, 0x01, 0x00, 0x05, 0x16, 0x03, 0x01, 0x00};
    private static final byte[] SHORT_V2_HEADER = {(byte) 0x80, 0x03, 0x01, 0x00};
    /** An SSLv2-format header whose 46-byte record has not all come. */
    private static final byte[] SHORT_V2_RECORD = {(byte) 0x80, 0x2e, 0x01, 0x03, 0x01, 0x00, 0x15};
    private static final byte[] JUNK = {0x48, 0x45, 0x4c, 0x00, 0x04, 0x48, 0x45, 0x4c, 0x4c};

    private static Provider provider(String name) {
        return "SunJSSE".equals(name) ? Contexts.sun() : Contexts.TLSBRIDGE;
    }

    /** A client engine that has sent its ClientHello and waits for the server. */
    private static SSLEngine waitingClient(String provider, String protocol) throws SSLException {
        SSLEngine e = Contexts.client(provider(provider)).createSSLEngine("localhost", 443);
        e.setUseClientMode(true);
        e.setEnabledProtocols(new String[] {protocol});
        ByteBuffer net = ByteBuffer.allocate(e.getSession().getPacketBufferSize());
        assertEquals(HandshakeStatus.NEED_UNWRAP, e.wrap(ByteBuffer.allocate(0), net).getHandshakeStatus());
        return e;
    }

    private static String unwrap(SSLEngine e, byte[] in) throws SSLException {
        ByteBuffer src = ByteBuffer.wrap(in);
        SSLEngineResult r = e.unwrap(src, ByteBuffer.allocate(e.getSession().getApplicationBufferSize()));
        return r.getStatus() + " " + r.getHandshakeStatus() + " " + r.bytesConsumed() + "/" + r.bytesProduced();
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"TLSBridge, TLSv1.3", "TLSBridge, TLSv1.2", "SunJSSE, TLSv1.3", "SunJSSE, TLSv1.2"})
    void basicsSequence(String provider, String protocol) throws Exception {
        SSLEngine e = waitingClient(provider, protocol);
        List<String> seen = new ArrayList<>();
        for (byte[] in : new byte[][] {SHORT_HEADER, SHORT_RECORD, SHORT_V2_HEADER, SHORT_V2_RECORD}) {
            seen.add(unwrap(e, in));
        }
        assertEquals(List.of("BUFFER_UNDERFLOW NEED_UNWRAP 0/0", "BUFFER_UNDERFLOW NEED_UNWRAP 0/0",
                "BUFFER_UNDERFLOW NEED_UNWRAP 0/0", "BUFFER_UNDERFLOW NEED_UNWRAP 0/0"), seen);
        SSLProtocolException x = assertThrows(SSLProtocolException.class, () -> unwrap(e, JUNK));
        assertTrue(x.getMessage() != null && !x.getMessage().isEmpty());
    }

    /** A server engine: the fragment of an SSLv2-format ClientHello waits; the whole of it is refused by name. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"TLSBridge", "SunJSSE"})
    void serverWaitsForAWholeSslv2Hello(String provider) throws Exception {
        SSLEngine e = Contexts.server(provider(provider), "rsa").createSSLEngine();
        e.setUseClientMode(false);
        assertEquals("BUFFER_UNDERFLOW NEED_UNWRAP 0/0", unwrap(e, SHORT_V2_HEADER));
        assertEquals("BUFFER_UNDERFLOW NEED_UNWRAP 0/0", unwrap(e, SHORT_V2_RECORD));
        byte[] whole = new byte[48];
        System.arraycopy(SHORT_V2_RECORD, 0, whole, 0, SHORT_V2_RECORD.length);
        SSLException x = assertThrows(SSLException.class, () -> unwrap(e, whole));
        assertTrue(x.getMessage().contains("SSLv2"), x.getMessage());
    }
}
