package org.tlsbridge.internal;

import java.util.logging.Logger;

/**
 * Whether tlsbridge seals the records it sends itself (native/core/seal.c)
 * or leaves them to OpenSSL: the native side turns sealing on only for the
 * OpenSSL releases its tests exercised, and {@code -Dtlsbridge.seal=false}
 * turns it off. Said by {@code java -jar}, logged once when the first
 * context is made, and shown by the {@code NativeObjects} MBean.
 */
public final class RecordSealing {
    private static volatile Boolean checked;
    private static volatile boolean logged;

    private RecordSealing() {
    }

    /** Whether this OpenSSL is one the seal was checked with: a new context carries the option then. */
    public static boolean checkedRelease() {
        Boolean b = checked;
        if (b == null) {
            NativeLibrary.ensureLoaded();
            long c;
            try {
                c = Native.ctxNew();
            } catch (javax.net.ssl.SSLException e) {
                return false;
            }
            try {
                b = (Native.ctxOptions(c, 0, 0) & NativeConstants.SSL_OP_ENABLE_KTLS) != 0;
            } finally {
                Native.ctxFree(c);
            }
            checked = b;
        }
        return b;
    }

    /** Whether contexts made now seal their records. */
    public static boolean on() {
        return checkedRelease() && !"false".equalsIgnoreCase(System.getProperty("tlsbridge.seal", "true"));
    }

    /** One line for users. */
    public static String describe() {
        NativeLibrary.ensureLoaded();
        String v = Native.openSslVersion();
        if (!checkedRelease()) {
            return "records sealed by OpenSSL: " + v + " is not a release tlsbridge's record sealing was checked"
                    + " with (docs/record-path.md)";
        }
        if (!on()) {
            return "records sealed by OpenSSL: -Dtlsbridge.seal=false";
        }
        return "records sealed by tlsbridge (" + v + " is a release its record sealing was checked with;"
                + " -Dtlsbridge.seal=false leaves them to OpenSSL)";
    }

    /** Logs {@link #describe()} once per class loader, at INFO. */
    public static void logOnce() {
        if (!logged) {
            logged = true;
            Logger.getLogger("org.tlsbridge").info("tlsbridge: " + describe());
        }
    }
}
