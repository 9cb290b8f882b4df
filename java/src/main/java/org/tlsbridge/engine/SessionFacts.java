package org.tlsbridge.engine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeConstants;

/**
 * What OpenSSL knows about a handshake's session, read in one JNI crossing
 * (Native.sessionFacts; layout in native/jni/jni_wire.h) instead of one per
 * value. The protocol, suite and group names repeat on every connection, so
 * they come by code, and by name only while this process has not seen the
 * code (a second crossing, a handful of times per process); the peer's
 * bytes (SNI, ALPN, OCSP staple) stay bytes until someone asks.
 */
final class SessionFacts {
    private static final ConcurrentHashMap<Integer, String> PROTOCOLS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<Integer, String> SUITES = new ConcurrentHashMap<>();
    /** OpenSSL's group id (NID, or flag | IANA id for groups without one) -> JSSE name */
    private static final ConcurrentHashMap<Integer, String> GROUPS = new ConcurrentHashMap<>();

    private static final int VERSION = NativeConstants.TB_SF_AT_VERSION;
    private static final int SUITE = NativeConstants.TB_SF_AT_SUITE;
    private static final int TIME = NativeConstants.TB_SF_AT_TIME;
    private static final int KEY = NativeConstants.TB_SF_AT_KEY;
    private static final int GROUP = NativeConstants.TB_SF_AT_GROUP;
    private static final int F_PROTOCOL = NativeConstants.TB_SF_F_PROTOCOL;
    private static final int F_SUITE = NativeConstants.TB_SF_F_SUITE;
    private static final int F_ID = NativeConstants.TB_SF_F_ID;
    private static final int F_ORIGIN = NativeConstants.TB_SF_F_ORIGIN;
    private static final int F_GROUP = NativeConstants.TB_SF_F_GROUP;
    private static final int F_SNI = NativeConstants.TB_SF_F_SNI;
    private static final int F_ALPN = NativeConstants.TB_SF_F_ALPN;
    private static final int F_SCHEMES = NativeConstants.TB_SF_F_SCHEMES;
    private static final int F_OCSP = NativeConstants.TB_SF_F_OCSP;

    private final byte[] b;

    SessionFacts(long ssl) {
        byte[] f = Native.sessionFacts(ssl, false);
        int group = int32(f, GROUP);
        if (!PROTOCOLS.containsKey(u16(f, VERSION)) || !SUITES.containsKey(u16(f, SUITE))
                || group != 0 && !GROUPS.containsKey(group)) {
            f = Native.sessionFacts(ssl, true);
            PROTOCOLS.putIfAbsent(u16(f, VERSION), ascii(f, F_PROTOCOL));
            SUITES.putIfAbsent(u16(f, SUITE), ascii(f, F_SUITE));
            if (group != 0) {
                GROUPS.putIfAbsent(group, NamedGroups.jsseName(bytes(f, F_GROUP)));
            }
        }
        if (at(f, NativeConstants.TB_SF_FIELDS) != f.length) {
            throw new IllegalStateException("session facts: " + f.length + " bytes, fields say "
                    + at(f, NativeConstants.TB_SF_FIELDS));
        }
        b = f;
    }

    private static int int32(byte[] b, int p) {
        return (b[p] & 0xff) << 24 | (b[p + 1] & 0xff) << 16 | (b[p + 2] & 0xff) << 8 | (b[p + 3] & 0xff);
    }

    private static int u16(byte[] b, int p) {
        return (b[p] & 0xff) << 8 | (b[p + 1] & 0xff);
    }

    /** Where field i's length prefix is: the fields are walked, not indexed (nothing to allocate). */
    private static int at(byte[] b, int field) {
        int p = NativeConstants.TB_SF_HEADER;
        for (int i = 0; i < field; i++) {
            p += 4 + int32(b, p);
        }
        return p;
    }

    private static String ascii(byte[] b, int field) {
        int p = at(b, field);
        return new String(b, p + 4, int32(b, p), StandardCharsets.ISO_8859_1);
    }

    private static byte[] bytes(byte[] b, int field) {
        int p = at(b, field);
        int n = int32(b, p);
        return n == 0 ? null : Arrays.copyOfRange(b, p + 4, p + 4 + n);
    }

    private int int32(int p) {
        return int32(b, p);
    }

    private long int64(int p) {
        return (long) int32(p) << 32 | (int32(p + 4) & 0xffffffffL);
    }

    private int len(int field) {
        return int32(at(b, field));
    }

    private int start(int field) {
        return at(b, field) + 4;
    }

    /** The field's bytes, or null when it is empty (absent, as the single queries answered). */
    private byte[] bytes(int field) {
        return bytes(b, field);
    }

    boolean reused() {
        return (b[0] & NativeConstants.TB_SF_REUSED) != 0;
    }

    boolean peerCertificate() {
        return (b[0] & NativeConstants.TB_SF_PEER_CERT) != 0;
    }

    String protocol() {
        return PROTOCOLS.get(u16(b, VERSION));
    }

    String cipherSuite() {
        return SUITES.get(u16(b, SUITE));
    }

    /** Session time in ms, or 0. */
    long time() {
        return int64(TIME);
    }

    /** The installed key whose chain the handshake sent, or 0 (KeyMaterial.is). */
    long localKey() {
        return int64(KEY);
    }

    /** The key-exchange group's JSSE name, or null (see TlsBridgeSession.namedGroup). */
    String namedGroup() {
        int id = int32(GROUP);
        return id == 0 ? null : GROUPS.get(id);
    }

    byte[] id() {
        byte[] id = bytes(F_ID);
        return id == null ? new byte[0] : id;
    }

    /** The origin token as a key for lookups (no copy), or null. */
    ByteBuffer origin() {
        return (b[0] & NativeConstants.TB_SF_ORIGIN) == 0 ? null
                : ByteBuffer.wrap(b, start(F_ORIGIN), len(F_ORIGIN));
    }

    byte[] serverName() {
        return bytes(F_SNI);
    }

    byte[] alpn() {
        return bytes(F_ALPN);
    }

    byte[] ocsp() {
        return bytes(F_OCSP);
    }

    /** The peer's certificate signature schemes (hash << 8 | sig), as the peer listed them. */
    int[] schemes() {
        int[] out = new int[len(F_SCHEMES) / 2];
        for (int i = 0, p = start(F_SCHEMES); i < out.length; i++, p += 2) {
            out[i] = u16(b, p);
        }
        return out;
    }
}
