package org.tlsbridge.internal;

/**
 * The one question native code asks Java synchronously: a server checking a
 * client's certificate chain (OpenSSL 3.0 cannot park that step, so it cannot
 * become a delegated task). Called on the thread inside unwrap, with no
 * array pinned.
 */
public abstract class NativeCallbacks {
    /** @return 0 when trusted, else an X509_V_ERR_* code for the alert. */
    protected abstract int verifyPeer(byte[][] chainDer);
}
