package org.tlsbridge.internal;

import static org.tlsbridge.internal.NativeConstants.*;

import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;

/** Decoding of the packed values native calls return (jni_engine.c; layout in jni_wire.h). */
public final class Results {
    public static final int LEN_BITS = TB_RES_LEN_BITS;
    public static final int MAX_LEN = (1 << LEN_BITS) - 1;
    private static final long LEN_MASK = MAX_LEN;

    private static final Status[] STATUS = new Status[4];
    private static final HandshakeStatus[] HS = new HandshakeStatus[5];

    static {
        STATUS[TB_OK] = Status.OK;
        STATUS[TB_UNDERFLOW] = Status.BUFFER_UNDERFLOW;
        STATUS[TB_OVERFLOW] = Status.BUFFER_OVERFLOW;
        STATUS[TB_CLOSED] = Status.CLOSED;
        HS[TB_HS_NOT] = HandshakeStatus.NOT_HANDSHAKING;
        HS[TB_HS_FINISHED] = HandshakeStatus.FINISHED;
        HS[TB_HS_NEED_TASK] = HandshakeStatus.NEED_TASK;
        HS[TB_HS_NEED_WRAP] = HandshakeStatus.NEED_WRAP;
        HS[TB_HS_NEED_UNWRAP] = HandshakeStatus.NEED_UNWRAP;
    }

    public static final int TASK_NONE = TB_TASK_NONE;
    public static final int TASK_VERIFY = TB_TASK_VERIFY;
    public static final int TASK_CERT = TB_TASK_CERT;
    public static final int TASK_HELLO = TB_TASK_HELLO;

    private Results() {
    }

    public static int consumed(long r) {
        return (int) (r & LEN_MASK);
    }

    public static int produced(long r) {
        return (int) ((r >>> LEN_BITS) & LEN_MASK);
    }

    public static Status status(long r) {
        return STATUS[(int) ((r >>> TB_RES_STATUS_SHIFT) & TB_RES_STATUS_MASK)];
    }

    /** The engine is idle on input: an unwrap of no bytes would answer {@link #UNDERFLOW_EMPTY} and change nothing. */
    public static boolean idleIn(long r) {
        return ((r >>> TB_RES_IDLE_SHIFT) & 1) != 0;
    }

    public static HandshakeStatus handshake(long r) {
        return hs((int) ((r >>> TB_RES_HS_SHIFT) & TB_RES_HS_MASK));
    }

    public static HandshakeStatus hs(int code) {
        return code >= 0 && code < HS.length ? HS[code] : HandshakeStatus.NOT_HANDSHAKING;
    }

    public static HandshakeStatus stateHandshake(int state) {
        return hs(state & TB_ST_HS_MASK);
    }

    public static boolean stateInboundDone(int state) {
        return (state & TB_ST_IN_DONE) != 0;
    }

    public static boolean stateOutboundDone(int state) {
        return (state & TB_ST_OUT_DONE) != 0;
    }

    public static boolean stateHandshakeDone(int state) {
        return (state & TB_ST_HS_DONE) != 0;
    }

    public static boolean stateFailed(int state) {
        return (state & TB_ST_FAILED) != 0;
    }

    public static boolean stateStarted(int state) {
        return (state & TB_ST_STARTED) != 0;
    }

    public static int stateTask(int state) {
        return (state >>> TB_ST_TASK_SHIFT) & TB_ST_TASK_MASK;
    }

    /** A TLS 1.3 post-handshake authentication is under way (a handshake in all but name). */
    public static boolean statePostHandshakeAuth(int state) {
        return (state & TB_ST_PHA) != 0;
    }

    public static boolean statePeerClosed(int state) {
        return (state & TB_ST_PEER_CLOSED) != 0;
    }

    /** What an unwrap finding no bytes answers once the handshake is over; immutable, so shared. */
    public static final SSLEngineResult UNDERFLOW_EMPTY =
            new SSLEngineResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, 0, 0);

    /**
     * A one-entry cache: identical results (same sizes, same statuses) are
     * the steady state of a connection, and SSLEngineResult is immutable, so
     * repeating one costs no allocation. {@link #UNDERFLOW_EMPTY} stays out
     * of the entry: servers alternate a record's result with it (Tomcat
     * unwraps an empty buffer after each read that found nothing), which
     * would otherwise replace the entry twice per request.
     */
    public static final class Cache {
        private SSLEngineResult last;

        public SSLEngineResult get(Status status, HandshakeStatus hs, int consumed, int produced) {
            if (status == Status.BUFFER_UNDERFLOW && hs == HandshakeStatus.NOT_HANDSHAKING && consumed == 0
                    && produced == 0) {
                return UNDERFLOW_EMPTY;
            }
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
