package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLProtocolException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/** The SSLEngine javadoc's promises, one by one, on tlsbridge engines. */
class ContractTest {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private static EnginePair pair(String protocol) throws SSLException {
        SSLContext c = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext s = Contexts.server(Contexts.TLSBRIDGE, "rsa", "ec");
        EnginePair p = new EnginePair(c, s, true);
        p.client.setEnabledProtocols(new String[] {protocol});
        p.handshake();
        return p;
    }

    private static ByteBuffer wrapAll(SSLEngine e, byte[] data) throws SSLException {
        ByteBuffer src = ByteBuffer.wrap(data);
        ByteBuffer out = ByteBuffer.allocate(data.length + 64 * 1024);
        while (src.hasRemaining()) {
            SSLEngineResult r = e.wrap(src, out);
            assertEquals(Status.OK, r.getStatus());
        }
        return out.flip();
    }

    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void wrapOverflowThenExactPacketSize(String protocol) throws Exception {
        EnginePair p = pair(protocol);
        byte[] msg = new byte[16384];
        ByteBuffer src = ByteBuffer.wrap(msg);
        ByteBuffer small = ByteBuffer.allocateDirect(16384);
        SSLEngineResult r = p.client.wrap(src, small);
        assertEquals(Status.BUFFER_OVERFLOW, r.getStatus());
        assertEquals(0, r.bytesConsumed());
        assertEquals(0, r.bytesProduced());
        assertEquals(0, src.position());
        ByteBuffer exact = ByteBuffer.allocateDirect(p.client.getSession().getPacketBufferSize());
        r = p.client.wrap(src, exact);
        assertEquals(Status.OK, r.getStatus());
        assertEquals(16384, r.bytesConsumed());
        exact.flip();
        ByteBuffer tiny = ByteBuffer.allocate(100);
        int before = exact.position();
        r = p.server.unwrap(exact, tiny);
        assertEquals(Status.BUFFER_OVERFLOW, r.getStatus());
        assertEquals(before, exact.position());
        ByteBuffer app = ByteBuffer.allocate(p.server.getSession().getApplicationBufferSize());
        r = p.server.unwrap(exact, app);
        assertEquals(Status.OK, r.getStatus());
        assertEquals(16384, r.bytesProduced());
        assertFalse(exact.hasRemaining());
    }

    /**
     * getPacketBufferSize holds every record OpenSSL accepts (2^14 + 320
     * bytes of body without compression) and is no larger than SunJSSE's:
     * Tomcat's secure channels allocate 16921-byte network buffers and
     * replace both with new ones on every connection whose engine asks for
     * more.
     */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void packetBufferSizeIsSunJssesAtMost(String protocol) throws Exception {
        EnginePair p = pair(protocol);
        SSLContext jdk = SSLContext.getInstance("TLS", "SunJSSE");
        jdk.init(null, null, null);
        int sun = jdk.createSSLEngine().getSession().getPacketBufferSize();
        for (SSLEngine e : new SSLEngine[] {p.client, p.server}) {
            int n = e.getSession().getPacketBufferSize();
            assertTrue(n >= 5 + 16384 + 320, protocol + ": " + n);
            assertTrue(n <= sun, protocol + ": " + n + " > SunJSSE's " + sun);
            assertTrue(n <= 16921, protocol + ": " + n + " > Tomcat's network buffers");
        }
    }

    @Test
    void underflowConsumesNothingAndPartialRecordsAcrossCalls() throws Exception {
        EnginePair p = pair("TLSv1.3");
        byte[] msg = "hello, partial world".getBytes();
        ByteBuffer rec = wrapAll(p.client, msg);
        byte[] wire = new byte[rec.remaining()];
        rec.get(wire);
        ByteBuffer in = ByteBuffer.allocate(wire.length);
        ByteBuffer app = ByteBuffer.allocate(16384);
        for (int i = 0; i < wire.length - 1; i++) {
            in.put(wire[i]).flip();
            SSLEngineResult r = p.server.unwrap(in, app);
            assertEquals(Status.BUFFER_UNDERFLOW, r.getStatus(), "byte " + i);
            assertEquals(0, in.position());
            in.position(in.limit()).limit(in.capacity());
        }
        in.put(wire[wire.length - 1]).flip();
        SSLEngineResult r = p.server.unwrap(in, app);
        assertEquals(Status.OK, r.getStatus());
        assertArrayEquals(msg, Arrays.copyOf(app.array(), app.position()));
    }

    @Test
    void severalRecordsInOneSource() throws Exception {
        EnginePair p = pair("TLSv1.2");
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        ByteBuffer wire = ByteBuffer.allocate(1 << 16);
        for (int i = 0; i < 5; i++) {
            byte[] m = ("message " + i).getBytes();
            all.write(m);
            p.client.wrap(ByteBuffer.wrap(m), wire);
        }
        wire.flip();
        ByteBuffer app = ByteBuffer.allocate(16384);
        while (wire.hasRemaining()) {
            SSLEngineResult r = p.server.unwrap(wire, app);
            assertEquals(Status.OK, r.getStatus());
            assertTrue(r.bytesConsumed() > 0);
        }
        assertArrayEquals(all.toByteArray(), Arrays.copyOf(app.array(), app.position()));
    }

    @Test
    void scatterAndGather() throws Exception {
        EnginePair p = pair("TLSv1.3");
        ByteBuffer[] srcs = {ByteBuffer.wrap("ab".getBytes()), ByteBuffer.wrap("cd".getBytes()).asReadOnlyBuffer(),
            ByteBuffer.allocateDirect(3).put("efg".getBytes()).flip()};
        ByteBuffer wire = ByteBuffer.allocate(p.client.getSession().getPacketBufferSize());
        SSLEngineResult r = p.client.wrap(srcs, wire);
        assertEquals(7, r.bytesConsumed());
        wire.flip();
        ByteBuffer[] dsts = {ByteBuffer.allocate(3), ByteBuffer.allocate(3), ByteBuffer.allocateDirect(3)};
        r = p.server.unwrap(wire, dsts);
        assertEquals(7, r.bytesProduced());
        assertEquals("abc", new String(dsts[0].array()));
        assertEquals("def", new String(dsts[1].array()));
        dsts[2].flip();
        assertEquals('g', dsts[2].get());
    }

    @Test
    void nothingAfterCloseOutboundButCloseNotify() throws Exception {
        EnginePair p = pair("TLSv1.3");
        p.client.closeOutbound();
        assertEquals(HandshakeStatus.NEED_WRAP, p.client.getHandshakeStatus());
        ByteBuffer out = ByteBuffer.allocate(p.client.getSession().getPacketBufferSize());
        SSLEngineResult r = p.client.wrap(ByteBuffer.wrap(new byte[100]), out);
        assertEquals(Status.CLOSED, r.getStatus());
        assertEquals(0, r.bytesConsumed());
        assertTrue(r.bytesProduced() > 0 && r.bytesProduced() < 64, "only close_notify: " + r.bytesProduced());
        assertTrue(p.client.isOutboundDone());
        r = p.client.wrap(ByteBuffer.wrap(new byte[100]), out);
        assertEquals(Status.CLOSED, r.getStatus());
        assertEquals(0, r.bytesConsumed());
        assertEquals(0, r.bytesProduced());
    }

    /**
     * A server that has sent close_notify (as Tomcat does before closing)
     * still reads what the client sends meanwhile: the engine hands its
     * record buffers back to OpenSSL at close_notify, so the read buffer is
     * allocated again here, including for a record that arrives in pieces;
     * heap and direct buffers.
     */
    @ParameterizedTest
    @CsvSource({"TLSv1.3,false", "TLSv1.2,false", "TLSv1.3,true", "TLSv1.2,true"})
    void readsAfterItsOwnCloseNotify(String protocol, boolean direct) throws Exception {
        EnginePair p = pair(protocol);
        byte[] before = new byte[3000];
        Arrays.fill(before, (byte) 'b');
        ByteBuffer early = buffer(p.client.getSession().getPacketBufferSize(), direct);
        p.client.wrap(ByteBuffer.wrap(before), early);
        early.flip();
        // half a record reaches the server before it closes
        ByteBuffer half = early.duplicate();
        half.limit(early.position() + early.remaining() / 2);
        ByteBuffer app = buffer(p.server.getSession().getApplicationBufferSize(), direct);
        SSLEngineResult r = p.server.unwrap(half, app);
        assertEquals(Status.BUFFER_UNDERFLOW, r.getStatus());
        early.position(early.position() + r.bytesConsumed());

        p.server.closeOutbound();
        ByteBuffer notify = buffer(p.server.getSession().getPacketBufferSize(), direct);
        r = p.server.wrap(ByteBuffer.allocate(0), notify);
        assertEquals(Status.CLOSED, r.getStatus());
        assertTrue(p.server.isOutboundDone());
        assertFalse(p.server.isInboundDone());

        ByteArrayOutputStream got = new ByteArrayOutputStream();
        while (early.hasRemaining()) {
            app.clear();
            r = p.server.unwrap(early, app);
            assertEquals(Status.OK, r.getStatus());
            app.flip();
            byte[] chunk = new byte[app.remaining()];
            app.get(chunk);
            got.write(chunk);
        }
        assertArrayEquals(before, got.toByteArray());
        byte[] after = new byte[40_000];
        for (int i = 0; i < after.length; i++) {
            after[i] = (byte) (i * 31 + 7);
        }
        assertArrayEquals(after, p.send(p.client, after));
        assertFalse(p.server.isInboundDone());

        p.client.closeOutbound();
        ByteBuffer bye = buffer(p.client.getSession().getPacketBufferSize(), direct);
        assertEquals(Status.CLOSED, p.client.wrap(ByteBuffer.allocate(0), bye).getStatus());
        bye.flip();
        app.clear();
        assertEquals(Status.CLOSED, p.server.unwrap(bye, app).getStatus());
        assertTrue(p.server.isInboundDone());
    }

    private static ByteBuffer buffer(int size, boolean direct) {
        return direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
    }

    @Test
    void closeNotifyBothWays() throws Exception {
        EnginePair p = pair("TLSv1.2");
        p.close(p.client);
        EnginePair q = pair("TLSv1.3");
        q.close(q.server);
    }

    @Test
    void unknownNamesAreIllegalArguments() throws Exception {
        SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine();
        assertThrows(IllegalArgumentException.class, () -> e.setEnabledCipherSuites(new String[] {"TLS_BOGUS"}));
        assertThrows(IllegalArgumentException.class, () -> e.setEnabledCipherSuites(null));
        assertThrows(IllegalArgumentException.class, () -> e.setEnabledProtocols(new String[] {"TLSv9"}));
        e.setEnabledProtocols(new String[] {"TLSv1", "TLSv1.3"}); // known names are kept, as SunJSSE keeps them
        assertArrayEquals(new String[] {"TLSv1", "TLSv1.3"}, e.getEnabledProtocols());
        e.setEnabledCipherSuites(new String[] {"ECDHE-RSA-AES128-GCM-SHA256", "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"});
        assertArrayEquals(new String[] {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, e.getEnabledCipherSuites());
    }

    @Test
    void modeMustBeSetAndReadOnlyDestinationsRefused() throws Exception {
        SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine();
        assertThrows(IllegalStateException.class, e::beginHandshake);
        e.setUseClientMode(true);
        assertThrows(ReadOnlyBufferException.class,
                () -> e.wrap(EMPTY, ByteBuffer.allocate(100).asReadOnlyBuffer()));
    }

    private static void assertClosedAfterFailure(SSLEngine e) throws SSLException {
        assertTrue(e.isInboundDone(), "inbound done after failure");
        ByteBuffer out = ByteBuffer.allocate(e.getSession().getPacketBufferSize());
        for (int i = 0; i < 3 && !e.isOutboundDone(); i++) {
            SSLEngineResult r = e.wrap(EMPTY, out);
            assertEquals(Status.CLOSED, r.getStatus());
        }
        assertTrue(e.isOutboundDone(), "outbound done once the alert is out");
        SSLEngineResult r = e.unwrap(ByteBuffer.wrap(new byte[] {23, 3, 3, 0, 1, 0}), ByteBuffer.allocate(100));
        assertEquals(Status.CLOSED, r.getStatus());
    }

    private static SSLEngine freshServer() {
        SSLEngine s = Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine();
        s.setUseClientMode(false);
        return s;
    }

    @Test
    void garbageIsAnSslExceptionThenClosed() throws Exception {
        SSLEngine s = freshServer();
        ByteBuffer junk = ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes());
        assertThrows(SSLException.class, () -> s.unwrap(junk, ByteBuffer.allocate(16384)));
        assertClosedAfterFailure(s);
    }

    @Test
    void sslv2HelloIsRefused() throws Exception {
        SSLEngine s = freshServer();
        byte[] v2 = {(byte) 0x80, 0x2e, 0x01, 0x03, 0x03, 0, 0x15, 0, 0, 0, 0x10, 0, 0, 0x2f, 0, 0, 0x35, 0, 0,
            0x0a, 0, 0, 0x05, 0, 0, 0x04, 0, 0, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
            19}; // all 48 bytes its header announces: a part of it is BUFFER_UNDERFLOW (PartialRecordTest)
        assertThrows(SSLProtocolException.class, () -> s.unwrap(ByteBuffer.wrap(v2), ByteBuffer.allocate(16384)));
        assertTrue(s.isInboundDone());
    }

    @Test
    void hugeRecordHeaderIsAnSslException() throws Exception {
        EnginePair p = pair("TLSv1.3");
        ByteBuffer hdr = ByteBuffer.wrap(new byte[] {23, 3, 3, (byte) 0x80, 0});
        SSLException e = assertThrows(SSLException.class, () -> p.server.unwrap(hdr, ByteBuffer.allocate(16384)));
        assertTrue(e.getMessage().contains("length"), e.getMessage());
        assertClosedAfterFailure(p.server);
    }

    @Test
    void flippedBitIsAnSslException() throws Exception {
        EnginePair p = pair("TLSv1.2");
        ByteBuffer rec = wrapAll(p.client, "integrity".getBytes());
        rec.put(rec.limit() - 2, (byte) (rec.get(rec.limit() - 2) ^ 1));
        SSLException e = assertThrows(SSLException.class, () -> p.server.unwrap(rec, ByteBuffer.allocate(16384)));
        assertTrue(e.getMessage().contains("bad record mac") || e.getMessage().contains("decrypt"), e.getMessage());
        assertClosedAfterFailure(p.server);
    }

    @Test
    void truncatedHandshakeEndsInAnSslException() throws Exception {
        SSLEngine c = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", 1);
        c.setUseClientMode(true);
        SSLEngine s = freshServer();
        ByteBuffer hello = ByteBuffer.allocate(c.getSession().getPacketBufferSize());
        c.wrap(EMPTY, hello);
        hello.flip().limit(hello.limit() / 2);
        SSLEngineResult r = s.unwrap(hello, ByteBuffer.allocate(16384));
        assertEquals(Status.BUFFER_UNDERFLOW, r.getStatus());
        assertThrows(SSLException.class, s::closeInbound);
        assertTrue(s.isInboundDone());
    }

    @Test
    void wrongTrustIsAHandshakeExceptionWithCause() throws Exception {
        SSLContext untrusting = Contexts.create(Contexts.TLSBRIDGE, "TLS", null, emptyTrust());
        EnginePair p = new EnginePair(untrusting, Contexts.server(Contexts.TLSBRIDGE, "rsa"), false);
        SSLHandshakeException e = assertThrows(SSLHandshakeException.class, p::handshake);
        assertTrue(e.getCause() instanceof java.security.cert.CertificateException, String.valueOf(e.getCause()));
    }

    private static javax.net.ssl.TrustManager[] emptyTrust() throws Exception {
        // the JDK's public CAs: our test CA is not among them
        javax.net.ssl.TrustManagerFactory f = javax.net.ssl.TrustManagerFactory.getInstance("PKIX");
        f.init((java.security.KeyStore) null);
        return f.getTrustManagers();
    }
}
