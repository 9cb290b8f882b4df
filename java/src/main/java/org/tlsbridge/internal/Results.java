package org.tlsbridge.internal;

import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;

/** Decoding of the packed values native calls return (jni_engine.c). */
public final class Results {
    public static final int LEN_BITS = 29;
    public static final int MAX_LEN = (1 << LEN_BITS) - 1;
    private static final long LEN_MASK = MAX_LEN;

    private static final Status[] STATUS = {Status.OK, Status.BUFFER_UNDERFLOW, Status.BUFFER_OVERFLOW,
        Status.CLOSED};
    private static final HandshakeStatus[] HS = {HandshakeStatus.NOT_HANDSHAKING, HandshakeStatus.FINISHED,
        HandshakeStatus.NEED_TASK, HandshakeStatus.NEED_WRAP, HandshakeStatus.NEED_UNWRAP};

    public static final int TASK_NONE = 0;
    public static final int TASK_VERIFY = 1;
    public static final int TASK_CERT = 2;
    public static final int TASK_HELLO = 3;

    private Results() {
    }

    public static int consumed(long r) {
        return (int) (r & LEN_MASK);
    }

    public static int produced(long r) {
        return (int) ((r >>> LEN_BITS) & LEN_MASK);
    }

    public static Status status(long r) {
        return STATUS[(int) ((r >>> 58) & 3)];
    }

    public static HandshakeStatus handshake(long r) {
        return hs((int) ((r >>> 60) & 7));
    }

    public static HandshakeStatus hs(int code) {
        return code >= 0 && code < HS.length ? HS[code] : HandshakeStatus.NOT_HANDSHAKING;
    }

    public static HandshakeStatus stateHandshake(int state) {
        return hs(state & 7);
    }

    public static boolean stateInboundDone(int state) {
        return (state & (1 << 3)) != 0;
    }

    public static boolean stateOutboundDone(int state) {
        return (state & (1 << 4)) != 0;
    }

    public static boolean stateHandshakeDone(int state) {
        return (state & (1 << 5)) != 0;
    }

    public static boolean stateFailed(int state) {
        return (state & (1 << 6)) != 0;
    }

    public static boolean stateStarted(int state) {
        return (state & (1 << 7)) != 0;
    }

    public static int stateTask(int state) {
        return (state >>> 8) & 7;
    }

    /** A TLS 1.3 post-handshake authentication is under way (a handshake in all but name). */
    public static boolean statePostHandshakeAuth(int state) {
        return (state & (1 << 12)) != 0;
    }

    public static boolean statePeerClosed(int state) {
        return (state & (1 << 11)) != 0;
    }

    /**
     * A one-entry cache: identical results (same sizes, same statuses) are
     * the steady state of a connection, and SSLEngineResult is immutable, so
     * repeating one costs no allocation.
     */
    public static final class Cache {
        private SSLEngineResult last;

        public SSLEngineResult get(Status status, HandshakeStatus hs, int consumed, int produced) {
            SSLEngineResult r = last;
            if (r != null && r.getStatus() == status && r.getHandshakeStatus() == hs
                    && r.bytesConsumed() == consumed && r.bytesProduced() == produced) {
                return r;
            }
            r = new SSLEngineResult(status, hs, consumed, produced);
            last = r;
            return r;
        }
    }
}
