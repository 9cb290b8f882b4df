package org.tlsbridge.engine;

/** Something that owns a native SSL behind a lock (an engine or a socket). */
public interface NativeOwner {
    /** Takes the owner's lock and returns the SSL, or 0 when it is gone (lock still taken). */
    long acquire();

    void release();
}
