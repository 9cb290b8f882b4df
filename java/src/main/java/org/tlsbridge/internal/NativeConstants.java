package org.tlsbridge.internal;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every number the Java classes share with libtlsbridge, under the name the
 * C code gives it. The library exports the same names with the values it was
 * compiled with (native/jni/jni_constants.c) and {@link NativeLibrary}
 * refuses a library whose table differs from the public fields here in any
 * name or value. The classes that use these numbers refer to these fields,
 * so this class is the one Java list; adding a field without its C entry (or
 * the reverse) fails the load too.
 */
public final class NativeConstants {
    // SSLEngineResult codes (native/core/tb.h), the indexes of Results' tables
    public static final int TB_OK = 0;
    public static final int TB_UNDERFLOW = 1;
    public static final int TB_OVERFLOW = 2;
    public static final int TB_CLOSED = 3;
    public static final int TB_HS_NOT = 0;
    public static final int TB_HS_FINISHED = 1;
    public static final int TB_HS_NEED_TASK = 2;
    public static final int TB_HS_NEED_WRAP = 3;
    public static final int TB_HS_NEED_UNWRAP = 4;

    // delegated tasks (tb.h)
    public static final int TB_TASK_NONE = 0;
    public static final int TB_TASK_VERIFY = 1;
    public static final int TB_TASK_CERT = 2;
    public static final int TB_TASK_HELLO = 3;

    // packed wrap/unwrap result and engine state, configure arguments (native/jni/jni_wire.h)
    public static final int TB_RES_LEN_BITS = 29;
    public static final int TB_RES_STATUS_SHIFT = 58;
    public static final int TB_RES_STATUS_MASK = 3;
    public static final int TB_RES_HS_SHIFT = 60;
    public static final int TB_RES_HS_MASK = 7;
    public static final int TB_RES_IDLE_SHIFT = 63;
    public static final int TB_ST_HS_MASK = 7;
    public static final int TB_ST_IN_DONE = 1 << 3;
    public static final int TB_ST_OUT_DONE = 1 << 4;
    public static final int TB_ST_HS_DONE = 1 << 5;
    public static final int TB_ST_FAILED = 1 << 6;
    public static final int TB_ST_STARTED = 1 << 7;
    public static final int TB_ST_TASK_SHIFT = 8;
    public static final int TB_ST_TASK_MASK = 7;
    public static final int TB_ST_PEER_CLOSED = 1 << 11;
    public static final int TB_ST_PHA = 1 << 12;
    public static final int TB_AUTH_NONE = 0;
    public static final int TB_AUTH_WANT = 1;
    public static final int TB_AUTH_NEED = 2;
    public static final int TB_EXT_HELLO_TASK = 1;
    public static final int TB_EXT_OCSP = 2;
    public static final int TB_EXT_CLIENT_FIRST = 4;
    public static final int TB_SF_REUSED = 1;
    public static final int TB_SF_PEER_CERT = 2;
    public static final int TB_SF_ORIGIN = 4;
    public static final int TB_SF_HEADER = 25;
    public static final int TB_SF_FIELDS = 9;
    public static final int TB_SF_AT_VERSION = 1;
    public static final int TB_SF_AT_SUITE = 3;
    public static final int TB_SF_AT_TIME = 5;
    public static final int TB_SF_AT_KEY = 13;
    public static final int TB_SF_AT_GROUP = 21;
    public static final int TB_SF_F_PROTOCOL = 0;
    public static final int TB_SF_F_SUITE = 1;
    public static final int TB_SF_F_ID = 2;
    public static final int TB_SF_F_ORIGIN = 3;
    public static final int TB_SF_F_GROUP = 4;
    public static final int TB_SF_F_SNI = 5;
    public static final int TB_SF_F_ALPN = 6;
    public static final int TB_SF_F_SCHEMES = 7;
    public static final int TB_SF_F_OCSP = 8;

    // the largest plaintext and record the engine handles (tb.h): JSSE's buffer sizes
    public static final int TB_MAX_PLAINTEXT = 16384;
    public static final int TB_MAX_RECORD = 16384 + 320 + 5;

    // socket option ids (native/core/socket.h)
    public static final int TB_SO_REUSEADDR = 1;
    public static final int TB_SO_NODELAY = 2;
    public static final int TB_SO_KEEPALIVE = 3;
    public static final int TB_SO_RCVBUF = 4;
    public static final int TB_SO_SNDBUF = 5;
    public static final int TB_SO_LINGER = 6;
    public static final int TB_SO_TCLASS = 7;
    /** a native socket read/write that returns TB_SOCK_TASK_BASE - task asks Java to run that task */
    public static final int TB_SOCK_TASK_BASE = -16;
    /** what a no-wait native socket call (a virtual thread's) returns instead of waiting for the peer */
    public static final int TB_SOCK_BLOCKED_READ = -3;
    public static final int TB_SOCK_BLOCKED_WRITE = -4;
    /** what a socket waits for, as the poller arms it */
    public static final int TB_WAIT_READ = 1;
    public static final int TB_WAIT_WRITE = 2;

    // OpenSSL's numbers, passed through as they are
    public static final int TLS1_2_VERSION = 0x0303;
    public static final int TLS1_3_VERSION = 0x0304;
    public static final long SSL_OP_NO_TICKET = 0x4000L;
    /** Where set, the engine's BIO seals the records it sends (native/core/seal.c). */
    public static final long SSL_OP_ENABLE_KTLS = 0x8L;
    public static final int SSL_AD_UNRECOGNIZED_NAME = 112;
    public static final int SSL_AD_ILLEGAL_PARAMETER = 47;
    public static final int SSL_AD_INTERNAL_ERROR = 80;
    public static final int X509_V_ERR_UNSPECIFIED = 1;
    public static final int X509_V_ERR_CERT_NOT_YET_VALID = 9;
    public static final int X509_V_ERR_CERT_HAS_EXPIRED = 10;
    public static final int X509_V_ERR_CERT_REVOKED = 23;
    public static final int X509_V_ERR_CERT_UNTRUSTED = 27;

    private NativeConstants() {
    }

    /** The public constants of this class by name, in declaration order. */
    static Map<String, Long> java() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Field f : NativeConstants.class.getDeclaredFields()) {
            int mod = f.getModifiers();
            if (!Modifier.isPublic(mod) || !Modifier.isStatic(mod) || !Modifier.isFinal(mod)) {
                continue;
            }
            try {
                m.put(f.getName(), ((Number) f.get(null)).longValue());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return m;
    }

    /**
     * Compares the library's table with the Java constants; throws naming
     * every constant that is missing on one side or has two values.
     */
    static void check(String[] names, long[] values, String library) {
        if (names == null || values == null || names.length != values.length) {
            throw new IllegalStateException("libtlsbridge (" + library + ") returned a malformed constants table");
        }
        Map<String, Long> java = java();
        Map<String, Long> lib = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            lib.put(names[i], values[i]);
        }
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Long> e : java.entrySet()) {
            Long v = lib.get(e.getKey());
            if (v == null) {
                wrong.add(e.getKey() + " (not in the library)");
            } else if (!v.equals(e.getValue())) {
                wrong.add(e.getKey() + " (library " + v + ", Java " + e.getValue() + ")");
            }
        }
        for (String n : lib.keySet()) {
            if (!java.containsKey(n)) {
                wrong.add(n + " (not in NativeConstants)");
            }
        }
        if (!wrong.isEmpty()) {
            throw new IllegalStateException("libtlsbridge (" + library
                    + ") and the Java classes disagree on constants they share: " + String.join(", ", wrong)
                    + "; use the library from the same tlsbridge build");
        }
    }
}
