package org.tlsbridge.socket;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
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
 *
 * <p>On a virtual thread no call waits in native code, where the JDK could
 * not unmount the thread: accept, connect, handshake, read and write run
 * without waiting and, when the peer is not ready, the thread parks in
 * {@link #await} until the {@link Poller} sees the descriptor ready, then
 * calls again. Which kind of thread makes the call decides, call by call,
 * so a socket accepted on one kind of thread may be served on the other.
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
    private static final int BLOCKED_READ = NativeConstants.TB_SOCK_BLOCKED_READ;
    private static final int BLOCKED_WRITE = NativeConstants.TB_SOCK_BLOCKED_WRITE;
    /** the timeout that tells a native call not to wait */
    private static final int NO_WAIT = -1;

    private final long ptr;
    private final boolean ipv6;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;
    private volatile boolean lingers; // SO_LINGER on with a time: the last close(2) blocks
    private volatile Waiters waiters; // virtual threads parked on this socket, once there were any

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
            if (!Poller.onVirtualThread()) {
                return new NativeSocket(Native.sockAccept(ptr, timeoutMs), ipv6);
            }
            for (;;) {
                long p = Native.sockAccept(ptr, NO_WAIT);
                if (p != BLOCKED_READ && p != BLOCKED_WRITE) {
                    return new NativeSocket(p, ipv6);
                }
                await((int) p, timeoutMs, "Accept timed out");
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    void connect(InetSocketAddress a, int timeoutMs) throws IOException {
        try {
            InetAddress ia = a.getAddress();
            if (!Poller.onVirtualThread()) {
                Native.sockConnect(ptr, ia.getAddress(), a.getPort(), scope(ia), timeoutMs);
                return;
            }
            int r;
            while ((r = Native.sockConnect(ptr, ia.getAddress(), a.getPort(), scope(ia), NO_WAIT)) != 0) {
                await(r, timeoutMs, "Connect timed out");
            }
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
            if (opt == SO_LINGER) {
                lingers = value > 0;
            }
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
            if (lingers && Poller.onVirtualThread()) {
                closeOnPlatformThread(closeNotify);
            } else {
                Native.sockClose(ptr, closeNotify);
            }
            Waiters w = waiters;
            if (w != null) {
                w.wakeAll(); // they call again and find the socket closed
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * With SO_LINGER the close(2) that drops the last reference blocks until
     * the peer has the data or the time is up; a virtual thread waits for it
     * parked, not in native code.
     */
    private void closeOnPlatformThread(boolean closeNotify) {
        CountDownLatch done = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            try {
                Native.sockClose(ptr, closeNotify);
            } finally {
                done.countDown();
            }
        }, "tlsbridge-linger-close");
        t.setDaemon(true);
        t.start();
        boolean interrupted = false;
        for (;;) {
            try {
                done.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
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
            if (!Poller.onVirtualThread()) {
                return Native.sockHandshake(ptr, timeoutMs);
            }
            for (;;) {
                int r = Native.sockHandshake(ptr, NO_WAIT);
                if (r != BLOCKED_READ && r != BLOCKED_WRITE) {
                    return r;
                }
                await(r, timeoutMs, "Read timed out during the TLS handshake");
            }
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
            if (!Poller.onVirtualThread()) {
                return Native.sockRead(ptr, b, off, len, timeoutMs);
            }
            for (;;) {
                int r = Native.sockRead(ptr, b, off, len, NO_WAIT);
                if (r != BLOCKED_READ && r != BLOCKED_WRITE) {
                    return r;
                }
                await(r, timeoutMs, "Read timed out");
            }
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
            if (!Poller.onVirtualThread()) {
                Native.sockWrite(ptr, b, off, len, false);
                return;
            }
            for (;;) {
                long r = Native.sockWrite(ptr, b, off, len, true);
                int done = (int) r;
                int blocked = -(int) (r >> 32);
                if (blocked == 0) {
                    return;
                }
                off += done;
                len -= done;
                await(blocked, 0, null); // len 0 now: the next call sends what is queued
            }
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

    // ---- virtual threads: waiting outside native code ----

    /**
     * Parks the calling virtual thread until the descriptor is ready for
     * what a no-wait call returned (BLOCKED_READ or BLOCKED_WRITE), the
     * socket is closed, or timeoutMs (0: none) passes, which throws
     * SocketTimeoutException with the native path's message. The caller
     * then calls again. An interrupt does not end the wait (it does not on a
     * platform thread either); the thread's interrupt status is kept.
     */
    private void await(int blocked, int timeoutMs, String timeoutMessage) throws IOException {
        int what = blocked == BLOCKED_WRITE ? NativeConstants.TB_WAIT_WRITE : NativeConstants.TB_WAIT_READ;
        Waiters w = waiters();
        Thread self = Thread.currentThread();
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        w.lock.lock();
        try {
            if (closed) {
                return; // the next call says so
            }
            w.waiting.put(self, what);
            int events = 0;
            for (int v : w.waiting.values()) {
                events |= v;
            }
            Poller.arm(ptr, w, events);
        } catch (IOException | RuntimeException e) {
            w.leave(self);
            throw e;
        } finally {
            w.lock.unlock();
        }
        boolean timedOut = false;
        boolean interrupted = false;
        try {
            while (!closed && w.isWaiting(self)) {
                if (deadline == 0) {
                    LockSupport.park(this);
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        timedOut = true;
                        break;
                    }
                    LockSupport.parkNanos(this, left);
                }
                if (Thread.interrupted()) {
                    interrupted = true;
                }
            }
        } finally {
            w.lock.lock();
            try {
                if (!w.leave(self)) {
                    timedOut = false; // woken as the time ran out: ready wins
                }
            } finally {
                w.lock.unlock();
            }
            if (interrupted) {
                self.interrupt();
            }
        }
        if (timedOut) {
            throw new SocketTimeoutException(timeoutMessage);
        }
    }

    private Waiters waiters() {
        Waiters w = waiters;
        if (w == null) {
            synchronized (this) {
                w = waiters;
                if (w == null) {
                    w = new Waiters();
                    waiters = w;
                }
            }
        }
        return w;
    }

    /** The virtual threads parked on one socket and what each waits for (TB_WAIT_*). */
    static final class Waiters {
        final long token = Poller.newToken();
        final ReentrantLock lock = new ReentrantLock();
        final Map<Thread, Integer> waiting = new LinkedHashMap<>(4);

        boolean isWaiting(Thread t) {
            lock.lock();
            try {
                return waiting.containsKey(t);
            } finally {
                lock.unlock();
            }
        }

        /** Removes t (lock held); whether it was still waiting, i.e. not woken. */
        boolean leave(Thread t) {
            boolean was = waiting.remove(t) != null;
            if (waiting.isEmpty()) {
                Poller.forget(this);
            }
            return was;
        }

        /** The descriptor is ready, or closed: every waiter calls again. */
        void wakeAll() {
            Thread[] ts;
            lock.lock();
            try {
                ts = waiting.keySet().toArray(new Thread[0]);
                waiting.clear();
                Poller.forget(this);
            } finally {
                lock.unlock();
            }
            for (Thread t : ts) {
                LockSupport.unpark(t);
            }
        }
    }
}
