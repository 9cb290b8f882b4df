package org.tlsbridge.socket;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.tlsbridge.internal.Native;

/**
 * Where virtual threads wait for a native socket. A virtual thread blocked
 * in native code pins its carrier, so its socket calls never wait there
 * (they return "blocked" instead, socket_park.c) and the thread parks here
 * until one epoll set, watched by one platform thread, says the descriptor
 * is ready. Platform threads keep waiting in native code, as before.
 */
final class Poller {
    /** Thread.isVirtual() on Java 21+, looked up once; null before (no virtual threads there). */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private static final AtomicLong TOKENS = new AtomicLong();
    private static final ConcurrentHashMap<Long, NativeSocket.Waiters> WAITING = new ConcurrentHashMap<>();
    private static volatile int epfd = -1;

    private Poller() {
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }

    /** Whether the calling thread is virtual: its socket calls must not wait in native code. */
    static boolean onVirtualThread() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static long newToken() {
        return TOKENS.incrementAndGet();
    }

    /** Arms the socket for these waits (TB_WAIT_* bits); its waiters are woken when it is ready. */
    static void arm(long sock, NativeSocket.Waiters w, int what) throws IOException {
        WAITING.put(w.token, w);
        Native.sockArm(sock, epoll(), what, w.token);
    }

    static void forget(NativeSocket.Waiters w) {
        WAITING.remove(w.token, w);
    }

    private static int epoll() throws IOException {
        int fd = epfd;
        if (fd >= 0) {
            return fd;
        }
        synchronized (Poller.class) {
            if (epfd < 0) {
                int e = Native.pollerNew();
                Thread t = new Thread(() -> run(e), "tlsbridge-poller"); // a platform thread
                t.setDaemon(true);
                t.start();
                epfd = e;
            }
            return epfd;
        }
    }

    private static void run(int fd) {
        long[] ready = new long[64];
        for (;;) {
            int n;
            try {
                n = Native.pollerWait(fd, ready);
            } catch (IOException e) {
                // epoll_wait fails only on a broken set: waiters fall back on their timeouts
                System.getLogger("org.tlsbridge.socket").log(System.Logger.Level.ERROR,
                        "tlsbridge's socket poller stopped: " + e.getMessage());
                return;
            }
            for (int i = 0; i < n; i++) {
                NativeSocket.Waiters w = WAITING.get(ready[i]);
                if (w != null) {
                    w.wakeAll();
                }
            }
        }
    }
}
