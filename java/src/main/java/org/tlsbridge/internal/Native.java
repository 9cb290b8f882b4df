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

    public static native String serverName(long engine);

    public static native byte[][] clientCaNames(long engine);

    public static native int checkHost(byte[] certDer, String host, boolean isIp);

    // sockets that own their descriptor (jni_socket.c); see org.tlsbridge.socket.NativeSocket
    public static native long sockNew(boolean ipv6) throws java.io.IOException;

    public static native void sockBind(long sock, byte[] addr, int port, int scope, boolean reuse)
            throws java.io.IOException;

    public static native void sockListen(long sock, int backlog) throws java.io.IOException;

    /** Blocks up to timeoutMs (0: no limit); returns the accepted socket. */
    public static native long sockAccept(long sock, int timeoutMs) throws java.io.IOException;

    public static native void sockConnect(long sock, byte[] addr, int port, int scope, int timeoutMs)
            throws java.io.IOException;

    public static native void sockSetOpt(long sock, int opt, int value) throws java.io.IOException;

    public static native int sockGetOpt(long sock, int opt) throws java.io.IOException;

    /** Address bytes + port (2 bytes) [+ IPv6 scope (4 bytes)], or null. */
    public static native byte[] sockName(long sock, boolean peer);

    public static native void sockShutdown(long sock, boolean output) throws java.io.IOException;

    /** Drops the owner's reference after waking every waiter; close_notify first if asked. */
    public static native void sockClose(long sock, boolean closeNotify);

    /** Frees what close left (the owner's Cleaner only: no call may be running). */
    public static native void sockFree(long sock);

    public static native int sockFd(long sock);

    /** OpenSSL on the descriptor; returns the engine handle for the session natives above. */
    public static native long sockAttach(long sock, long ctx, boolean client, NativeCallbacks callbacks)
            throws javax.net.ssl.SSLException;

    /** 0 when the handshake is done, else a task kind ({@link Results}) to run before calling again. */
    public static native int sockHandshake(long sock, int timeoutMs) throws java.io.IOException;

    /** Always takes a reference (drop it with sockLeave); returns the engine handle, 0 when closed. */
    public static native long sockEnter(long sock);

    public static native void sockLeave(long sock);

    public static native void sockTaskDone(long sock);

    public static native void sockKeyUpdate(long sock) throws javax.net.ssl.SSLException;

    /** Bytes read, or -1 at end of stream. */
    public static native int sockRead(long sock, byte[] b, int off, int len, int timeoutMs)
            throws java.io.IOException;

    public static native void sockWrite(long sock, byte[] b, int off, int len) throws java.io.IOException;

    public static native int sockAvailable(long sock);

    /** TLS bytes in/out, plaintext in/out, records in/out, ns read/write/handshake. */
    public static native long[] sockStats(long sock);
}
