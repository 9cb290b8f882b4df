package org.tlsbridge.socket;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.UnknownHostException;
import org.tlsbridge.internal.Cleaners;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeCallbacks;
import org.tlsbridge.internal.NativeConstants;

/**
 * One descriptor owned by libtlsbridge (native/core/socket.h). The native
 * side counts the threads inside each call, so close() from any thread only
 * marks and wakes them and the descriptor and SSL go when the last one
 * leaves; the small native struct goes with this object (Cleaner), so the
 * handle stays valid for every method here. Each method fences {@code this}
 * so the Cleaner can never run while a call is in progress.
 */
final class NativeSocket {
    static final int SO_REUSEADDR = NativeConstants.TB_SO_REUSEADDR;
    static final int TCP_NODELAY = NativeConstants.TB_SO_NODELAY;
    static final int SO_KEEPALIVE = NativeConstants.TB_SO_KEEPALIVE;
    static final int SO_RCVBUF = NativeConstants.TB_SO_RCVBUF;
    static final int SO_SNDBUF = NativeConstants.TB_SO_SNDBUF;
    static final int SO_LINGER = NativeConstants.TB_SO_LINGER;
    static final int IP_TOS = NativeConstants.TB_SO_TCLASS;
    static final int TASK_BASE = NativeConstants.TB_SOCK_TASK_BASE;

    private final long ptr;
    private final boolean ipv6;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    private NativeSocket(long ptr, boolean ipv6) {
        this.ptr = ptr;
        this.ipv6 = ipv6;
        this.cleanable = Cleaners.CLEANER.register(this, () -> Native.sockFree(ptr));
    }

    /** A TCP socket for this address family (IPv6 sockets are dual-stack). */
    static NativeSocket open(boolean ipv6) throws IOException {
        return new NativeSocket(Native.sockNew(ipv6), ipv6);
    }

    /**
     * A socket for this address's family; for none or the wildcard, a
     * dual-stack socket when the host has IPv6, else IPv4 (java.net's choice).
     */
    static NativeSocket forAddress(InetAddress a) throws IOException {
        if (a != null && !a.isAnyLocalAddress()) {
            return open(a instanceof Inet6Address);
        }
        try {
            return open(true);
        } catch (IOException e) {
            return open(false);
        }
    }

    void bind(InetSocketAddress a, boolean reuse) throws IOException {
        try {
            InetAddress ia = a == null ? null : a.getAddress();
            Native.sockBind(ptr, ia == null || ia.isAnyLocalAddress() ? null : ia.getAddress(),
                    a == null ? 0 : a.getPort(), scope(ia), reuse);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    void listen(int backlog) throws IOException {
        try {
            Native.sockListen(ptr, backlog);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    NativeSocket accept(int timeoutMs) throws IOException {
        try {
            long p = Native.sockAccept(ptr, timeoutMs);
            return new NativeSocket(p, ipv6);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    void connect(InetSocketAddress a, int timeoutMs) throws IOException {
        try {
            InetAddress ia = a.getAddress();
            Native.sockConnect(ptr, ia.getAddress(), a.getPort(), scope(ia), timeoutMs);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    private static int scope(InetAddress ia) {
        return ia instanceof Inet6Address ? ((Inet6Address) ia).getScopeId() : 0;
    }

    void setOption(int opt, int value) throws SocketException {
        try {
            Native.sockSetOpt(ptr, opt, value);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    int option(int opt) throws SocketException {
        try {
            return Native.sockGetOpt(ptr, opt);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The local or peer address, or null when there is none (not bound, not connected, closed). */
    InetSocketAddress address(boolean peer) {
        byte[] b;
        try {
            b = Native.sockName(ptr, peer);
        } finally {
            Reference.reachabilityFence(this);
        }
        if (b == null) {
            return null;
        }
        int alen = b.length == 6 ? 4 : 16;
        byte[] addr = java.util.Arrays.copyOf(b, alen);
        int port = ((b[alen] & 0xff) << 8) | (b[alen + 1] & 0xff);
        try {
            InetAddress ia = InetAddress.getByAddress(addr); // IPv4-mapped becomes Inet4Address
            if (alen == 16 && ia instanceof Inet6Address) {
                int scope = ((b[18] & 0xff) << 24) | ((b[19] & 0xff) << 16) | ((b[20] & 0xff) << 8) | (b[21] & 0xff);
                if (scope != 0) {
                    ia = Inet6Address.getByAddress(null, addr, scope);
                }
            }
            return new InetSocketAddress(ia, port);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    void shutdown(boolean output) throws IOException {
        try {
            Native.sockShutdown(ptr, output);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Wakes every thread blocked on this socket; sends close_notify first if asked. */
    void close(boolean closeNotify) {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Native.sockClose(ptr, closeNotify);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    int fd() {
        try {
            return Native.sockFd(ptr);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    // ---- TLS on the descriptor ----

    long attach(long ctx, boolean client, NativeCallbacks callbacks) throws IOException {
        try {
            return Native.sockAttach(ptr, ctx, client, callbacks);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    int handshake(int timeoutMs) throws IOException {
        try {
            return Native.sockHandshake(ptr, timeoutMs);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Takes a reference; the engine handle, or 0 when closed. Always pair with {@link #leave}. */
    long enter() {
        return Native.sockEnter(ptr);
    }

    void leave() {
        try {
            Native.sockLeave(ptr);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    void taskDone() {
        try {
            Native.sockTaskDone(ptr);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    void keyUpdate() throws IOException {
        try {
            Native.sockKeyUpdate(ptr);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Bytes read, -1 at the end of the stream, or at most {@link #TASK_BASE}:
     * the read met a post-handshake request (a TLS 1.3 CertificateRequest)
     * and parked on a task ({@link #task}) to run, then {@link #taskDone}, then read again.
     */
    int read(byte[] b, int off, int len, int timeoutMs) throws IOException {
        try {
            return Native.sockRead(ptr, b, off, len, timeoutMs);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The task (Results.TASK_*) a value of {@link #read} asks for, or 0 when it is a byte count or end of stream. */
    static int task(int readResult) {
        return readResult <= TASK_BASE ? TASK_BASE - readResult : 0;
    }

    void write(byte[] b, int off, int len) throws IOException {
        try {
            Native.sockWrite(ptr, b, off, len);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    int available() {
        try {
            return Native.sockAvailable(ptr);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    long[] stats() {
        try {
            return Native.sockStats(ptr);
        } finally {
            Reference.reachabilityFence(this);
        }
    }
}
