package org.tlsbridge.internal;

/**
 * Process-level figures for leak hunting (the soak test under tests/soak,
 * certificate reload): not part of the provider's API, and nothing on the
 * TLS path calls it. The same counts are readable over JMX through
 * {@link NativeObjects}, which the server integrations register.
 */
public final class Diagnostics {
    private static final int CONTEXTS = 0;
    private static final int SSLS = 1;
    private static final int KEYS = 2;

    private Diagnostics() {
    }

    /**
     * Bytes of native heap in use in the whole process, as glibc's
     * {@code mallinfo2()} counts them ({@code uordblks + hblkhd}: allocated
     * chunks in every arena plus mmap'd blocks), OpenSSL's and the JVM's own
     * mallocs included. -1 when the C library has no mallinfo2 (not glibc
     * 2.33+). Loads the native library if needed.
     */
    public static long nativeHeapInUse() {
        NativeLibrary.ensureLoaded();
        return Native.mallocInUse();
    }

    /**
     * OpenSSL contexts (SSL_CTX) alive now: one per initialised SSLContext
     * (plus one per earlier init of it) until the SSLContext is collected and
     * the last connection made from it is freed, whichever comes later.
     */
    public static long liveContexts() {
        NativeLibrary.ensureLoaded();
        return Native.liveObjects(CONTEXTS);
    }

    /** OpenSSL connections (SSL) alive now: engines and sockets not yet freed. */
    public static long liveConnections() {
        NativeLibrary.ensureLoaded();
        return Native.liveObjects(SSLS);
    }

    /** Parsed key material (private key and chain from a KeyManager) alive now. */
    public static long liveKeys() {
        NativeLibrary.ensureLoaded();
        return Native.liveObjects(KEYS);
    }
}
