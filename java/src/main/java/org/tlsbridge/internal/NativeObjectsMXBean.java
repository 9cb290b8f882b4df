package org.tlsbridge.internal;

/** JMX view of {@link Diagnostics}: {@code org.tlsbridge:type=NativeObjects}. */
public interface NativeObjectsMXBean {
    long getContexts();

    long getConnections();

    long getKeys();

    long getNativeHeapInUse();

    /**
     * The OpenSSL that serves TLS in this JVM: its version text, the flavour ("bundled": the jar's own,
     * linked into the library; "system": the host's libssl) and the library file loaded.
     */
    String getOpenSsl();

    /** Whether tlsbridge or OpenSSL seals the records sent, and why. */
    String getRecordSealing();
}
