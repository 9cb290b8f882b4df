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

    /** mallinfo2(): uordblks + hblkhd, or -1 without glibc 2.33+; see {@link Diagnostics}. */
    public static native long mallocInUse();

    /** Live native objects of one kind (0 SSL_CTX, 1 SSL, 2 key material; native/core/live.h), -1 for another. */
    public static native long liveObjects(int kind);

    // the numbers shared with Java, for the loader's check (jni_constants.c, NativeConstants)
    public static native String[] constantNames();

    public static native long[] constantValues();

    // contexts and their settings, ciphers, keys (jni_context.c)
    public static native long ctxNew() throws javax.net.ssl.SSLException;

    public static native void ctxFree(long ctx);

    public static native void ctxClientCaNames(long ctx, byte[][] names);

    public static native void ctxSessionCache(long ctx, int size, int timeoutSeconds);

    /** OpenSSL SSL_OP_* bits on the context, before any engine is made; returns the new set. */
    public static native long ctxOptions(long ctx, long set, long clear);

    public static native void ctxKeylog(long ctx, String path) throws javax.net.ssl.SSLException;

    /** Triples: standard name, OpenSSL name, "13" or "12". */
    public static native String[] ciphers() throws javax.net.ssl.SSLException;

    /** Standard names of the suites the context enables by default (may end in nulls). */
    public static native String[] ctxCipherNames(long ctx);

    /** The suite lists every engine of the context inherits (null leaves one alone); at init only. */
    public static native void ctxCiphers(long ctx, String ciphers12, String ciphers13)
            throws javax.net.ssl.SSLException;

    public static native long keyNew(byte[] pkcs8, byte[][] chain) throws javax.net.ssl.SSLException;

    public static native void keyFree(long key);

    public static native String keyType(long key);

    // engines (jni_engine.c)
    public static native long engineNew(long ctx, boolean client, NativeCallbacks callbacks)
            throws javax.net.ssl.SSLException;

    public static native void engineFree(long engine);

    /**
     * Packed result, see {@link Results}; throws on failure. Each side is a
     * direct buffer's {@link #bufferAddress} (0 if none) or else a heap array;
     * the caller keeps that buffer reachable, so its memory stays, for the call.
     */
    public static native long wrap(long engine, long srcAddress, byte[] srcArray, int srcOff, int srcLen,
            long dstAddress, byte[] dstArray, int dstOff, int dstLen) throws javax.net.ssl.SSLException;

    public static native long unwrap(long engine, long srcAddress, byte[] srcArray, int srcOff, int srcLen,
            long dstAddress, byte[] dstArray, int dstOff, int dstLen) throws javax.net.ssl.SSLException;

    /** The start of a direct buffer's memory (its position 0), or 0 when it is not direct. */
    public static native long bufferAddress(ByteBuffer buffer);

    public static native int begin(long engine) throws javax.net.ssl.SSLException;

    public static native int closeOutbound(long engine);

    public static native int closeInbound(long engine);

    /** Packed state, see {@link Results#stateHandshake} and friends. */
    public static native int state(long engine);

    public static native int taskDone(long engine);

    public static native void verifyResult(long engine, boolean ok, int x509Error);

    public static native byte[][] pendingChain(long engine);

    /** keyLimitGcm/keyLimitChaCha: bytes per TLS 1.3 write key before a KeyUpdate, 0 for none. */
    public static native void configure(long engine, String ciphers12, String ciphers13, int minVersion,
            int maxVersion, int clientAuth, boolean serverPreference, long keyLimitGcm, long keyLimitChaCha)
            throws javax.net.ssl.SSLException;

    /** Whether the engine holds a suite list of its own rather than its context's. */
    public static native boolean ownCiphers(long engine);

    public static native void useKey(long engine, long key) throws javax.net.ssl.SSLException;

    /** The client's SNI host_name, as sent: SNIHostName.getEncoded(). */
    public static native void setServerName(long engine, byte[] hostName) throws javax.net.ssl.SSLException;

    public static native void setGroups(long engine, String opensslGroups) throws javax.net.ssl.SSLException;

    public static native void requestPostHandshakeAuth(long engine, boolean need) throws javax.net.ssl.SSLException;

    /** For each OpenSSL group name, whether this OpenSSL implements it. */
    public static native boolean[] groupsSupported(String[] opensslNames) throws javax.net.ssl.SSLException;

    // sessions and client resumption (jni_session.c)
    /** A second init: the new, unused SSL_CTX takes the previous one's session caches and ticket keys. */
    public static native void ctxShareSessions(long ctx, long previous) throws javax.net.ssl.SSLException;

    /** Session-ticket keys from a file (docs/fleet.md), at any time; a refused file leaves the keys in use. */
    public static native void ctxTicketKeys(long ctx, String path) throws javax.net.ssl.SSLException;

    /** The key file again if it changed: true when its new keys are in use; a refused file throws, keys kept. */
    public static native boolean ctxTicketKeysRefresh(long ctx) throws javax.net.ssl.SSLException;

    /**
     * What the session reports, in one crossing (layout: native/jni/jni_wire.h,
     * decoded by engine.SessionFacts); the SNI, ALPN and OCSP staple are the
     * peer's bytes as sent. Protocol, suite and group names only when asked.
     */
    public static native byte[] sessionFacts(long engine, boolean names);

    public static native byte[][] peerChain(long engine);

    public static native byte[][] localChain(long engine);

    public static native int[] peerSigAlgs(long engine);

    public static native byte[][] clientCaNames(long engine);

    public static native int checkHost(byte[] certDer, String host, boolean isIp);

    /**
     * Names the peer for the client session cache (the key: peer and identity asked of it), after
     * the protocols and suites are set; true when a cached session will be offered.
     */
    public static native boolean setPeer(long engine, String key);

    public static native void ctxClientCache(long ctx, int size, int timeoutSeconds);

    /** SSLSession.invalidate(): sessions from the full handshake with this origin token are not offered or resumed. */
    public static native void ctxForgetSession(long ctx, byte[] origin);

    // extensions (jni_extensions.c)
    /**
     * flags: 1 = the ClientHello goes to a Java task, 2 = request an OCSP staple (client), 4 = the client
     * speaks first after the handshake (server: a TLS 1.2 handshake's FINISHED comes from the unwrap after
     * its last flight, handshake.c).
     */
    public static native void configureExtensions(long engine, byte[] alpnWire, int flags)
            throws javax.net.ssl.SSLException;

    public static native byte[] helloServerName(long engine);

    public static native byte[] helloAlpn(long engine);

    public static native void helloAnswer(long engine, byte[] alpnChoice, boolean noneChosen, int alert);

    /** The negotiated protocol's bytes (ISO-8859-1 in Java, as JSSE maps them), or null. */
    public static native byte[] alpnSelected(long engine);

    public static native void keySetOcsp(long key, byte[] der);

    // configuration inputs resolved by OpenSSL (jni_config.c)
    /**
     * The first private key of a PEM file as unencrypted PKCS#8 DER; password is UTF-8 or null, and
     * passwordName the setting it came from, as the user wrote it (for the error message).
     */
    public static native byte[] pemKey(String path, byte[] password, String passwordName)
            throws java.io.IOException;

    /** Every certificate of a PEM file, in order, as DER (at least one). */
    public static native byte[][] pemCertificates(String path) throws java.io.IOException;

    /** Standard names of the suites an OpenSSL cipher string selects, TLS 1.3 first. */
    public static native String[] cipherExpand(String spec) throws javax.net.ssl.SSLException;

    // sockets that own their descriptor (jni_socket.c); see org.tlsbridge.socket.NativeSocket
    public static native long sockNew(boolean ipv6) throws java.io.IOException;

    public static native void sockBind(long sock, byte[] addr, int port, int scope, boolean reuse)
            throws java.io.IOException;

    public static native void sockListen(long sock, int backlog) throws java.io.IOException;

    /*
     * accept, connect, handshake and read take timeoutMs: 0 waits for ever; below 0 they
     * never wait (a virtual thread's calls) and return TB_SOCK_BLOCKED_READ/WRITE instead
     * (NativeConstants; socket_park.c), to be called again once the descriptor is ready.
     */

    /** Blocks up to timeoutMs (0: no limit); returns the accepted socket. */
    public static native long sockAccept(long sock, int timeoutMs) throws java.io.IOException;

    public static native int sockConnect(long sock, byte[] addr, int port, int scope, int timeoutMs)
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

    /** Bytes read, -1 at end of stream, or a post-handshake task to run first (NativeSocket.read). */
    public static native int sockRead(long sock, byte[] b, int off, int len, int timeoutMs)
            throws java.io.IOException;

    public static native long sockWrite(long sock, byte[] b, int off, int len, boolean nowait)
            throws java.io.IOException;

    /** An epoll set for {@code sockArm}/{@code pollerWait} (org.tlsbridge.socket.Poller). */
    public static native int pollerNew() throws java.io.IOException;

    /** Arms the socket's descriptor one-shot in epfd for what (TB_WAIT_*) with token; throws when closed. */
    public static native void sockArm(long sock, int epfd, int what, long token) throws java.io.IOException;

    /** Blocks until armed sockets are ready; their tokens into tokens, returns how many. */
    public static native int pollerWait(int epfd, long[] tokens) throws java.io.IOException;

    public static native int sockAvailable(long sock);

    /** TLS bytes in/out, plaintext in/out, records in/out, ns read/write/handshake. */
    public static native long[] sockStats(long sock);
}
