package org.tlsbridge.internal;

import java.nio.ByteBuffer;

/**
 * Every native method of libtlsbridge, bound in one table by JNI_OnLoad
 * (native/jni/jni_main.c). Handles are addresses of native objects; callers
 * guarantee they are live (engine and context classes own them).
 */
public final class Native {
    private Native() {
    }

    // library (jni_library.c)
    public static native String buildId();

    public static native String openSslVersion();

    public static native long openSslVersionNumber();

    // contexts, ciphers, keys (jni_context.c)
    public static native long ctxNew() throws javax.net.ssl.SSLException;

    public static native void ctxFree(long ctx);

    public static native void ctxClientCaNames(long ctx, byte[][] names);

    public static native void ctxSessionCache(long ctx, int size, int timeoutSeconds);

    /** OpenSSL SSL_OP_* bits on the context, before any engine is made; returns the new set. */
    public static native long ctxOptions(long ctx, long set, long clear);

    /** Triples: standard name, OpenSSL name, "13" or "12". */
    public static native String[] ciphers() throws javax.net.ssl.SSLException;

    /** Standard names of the suites the context enables by default (may end in nulls). */
    public static native String[] ctxCipherNames(long ctx);

    public static native long keyNew(byte[] pkcs8, byte[][] chain) throws javax.net.ssl.SSLException;

    public static native void keyFree(long key);

    public static native String keyType(long key);

    // engines (jni_engine.c)
    public static native long engineNew(long ctx, boolean client, NativeCallbacks callbacks)
            throws javax.net.ssl.SSLException;

    public static native void engineFree(long engine);

    /** Packed result, see {@link Results}; throws on failure. */
    public static native long wrap(long engine, ByteBuffer srcDirect, byte[] srcArray, int srcOff, int srcLen,
            ByteBuffer dstDirect, byte[] dstArray, int dstOff, int dstLen) throws javax.net.ssl.SSLException;

    public static native long unwrap(long engine, ByteBuffer srcDirect, byte[] srcArray, int srcOff, int srcLen,
            ByteBuffer dstDirect, byte[] dstArray, int dstOff, int dstLen) throws javax.net.ssl.SSLException;

    public static native int begin(long engine) throws javax.net.ssl.SSLException;

    public static native int closeOutbound(long engine);

    public static native int closeInbound(long engine);

    /** Packed state, see {@link Results#stateHandshake} and friends. */
    public static native int state(long engine);

    public static native int taskDone(long engine);

    public static native void verifyResult(long engine, boolean ok, int x509Error);

    public static native byte[][] pendingChain(long engine);

    public static native void configure(long engine, String ciphers12, String ciphers13, int minVersion,
            int maxVersion, int clientAuth, boolean serverPreference) throws javax.net.ssl.SSLException;

    public static native void useKey(long engine, long key) throws javax.net.ssl.SSLException;

    public static native void setServerName(long engine, String host) throws javax.net.ssl.SSLException;

    // sessions (jni_session.c)
    public static native String protocol(long engine);

    public static native String cipher(long engine);

    public static native byte[] sessionId(long engine);

    public static native long sessionTime(long engine);

    public static native boolean reused(long engine);

    public static native byte[][] peerChain(long engine);

    public static native byte[][] localChain(long engine);

    public static native int[] peerSigAlgs(long engine);

    /** signature_algorithms_cert when the peer sent it, else {@link #peerSigAlgs}. */
    public static native int[] peerCertSigAlgs(long engine);

    public static native String serverName(long engine);

    public static native byte[][] clientCaNames(long engine);

    public static native int checkHost(byte[] certDer, String host, boolean isIp);

    // extensions (jni_extensions.c)
    /** flags: 1 = the ClientHello goes to a Java task, 2 = request an OCSP staple (client). */
    public static native void configureExtensions(long engine, byte[] alpnWire, int flags)
            throws javax.net.ssl.SSLException;

    public static native String helloServerName(long engine);

    public static native byte[] helloAlpn(long engine);

    public static native void helloAnswer(long engine, byte[] alpnChoice, boolean noneChosen, int alert);

    public static native String alpnSelected(long engine);

    public static native byte[] ocspResponse(long engine);

    public static native void keySetOcsp(long key, byte[] der);

    public static native void requestPostHandshakeAuth(long engine, boolean need) throws javax.net.ssl.SSLException;

    /** Names the peer for the client session cache; true when a cached session will be offered. */
    public static native boolean setPeer(long engine, String hostPort);

    public static native void ctxClientCache(long ctx, int size, int timeoutSeconds);

    public static native void ctxKeylog(long ctx, String path) throws javax.net.ssl.SSLException;

    public static native void setGroups(long engine, String opensslGroups) throws javax.net.ssl.SSLException;

    // configuration inputs resolved by OpenSSL (jni_config.c)
    /** The first private key of a PEM file as unencrypted PKCS#8 DER; password is UTF-8 or null. */
    public static native byte[] pemKey(String path, byte[] password) throws java.io.IOException;

    /** Every certificate of a PEM file, in order, as DER (at least one). */
    public static native byte[][] pemCertificates(String path) throws java.io.IOException;

    /** Standard names of the suites an OpenSSL cipher string selects, TLS 1.3 first. */
    public static native String[] cipherExpand(String spec) throws javax.net.ssl.SSLException;
}
