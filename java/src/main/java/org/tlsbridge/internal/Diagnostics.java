package org.tlsbridge.internal;

/**
 * Process-level figures for leak hunting (the soak test under tests/soak):
 * not part of the provider's API, and nothing in the provider calls it.
 */
public final class Diagnostics {
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
}
