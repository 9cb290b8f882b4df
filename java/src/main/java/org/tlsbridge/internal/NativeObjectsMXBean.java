package org.tlsbridge.internal;

/** JMX view of {@link Diagnostics}: {@code org.tlsbridge:type=NativeObjects}. */
public interface NativeObjectsMXBean {
    long getContexts();

    long getConnections();

    long getKeys();

    long getNativeHeapInUse();

    /** Whether tlsbridge or OpenSSL seals the records sent, and why. */
    String getRecordSealing();
}
