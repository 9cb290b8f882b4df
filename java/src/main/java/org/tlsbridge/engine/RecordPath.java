package org.tlsbridge.engine;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLException;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.Results;

/**
 * The buffer side of an engine's wrap and unwrap: turns the caller's
 * buffers into the one native call (a direct buffer at its address, a heap
 * array pinned by the native side), gathers several small sources into one
 * record and scatters a record over several small destinations through
 * direct staging buffers, and moves the positions by what the call
 * consumed and produced. The engine holds its lock around every call.
 *
 * <p>A direct buffer's address is asked of the native side once and kept
 * with the buffer, one per role: callers reuse the same buffers for a
 * connection's life, and asking JNI on every call costs three VM
 * transitions per buffer. Holding the buffer keeps its memory alive for
 * as long as the address is kept.
 */
final class RecordPath {
    private static final int STAGE_SIZE = TlsBridgeSession.PACKET_BUFFER_SIZE;

    private ByteBuffer stage;
    private ByteBuffer stage2;
    private final Address wrapSrc = new Address();
    private final Address wrapDst = new Address();
    private final Address unwrapSrc = new Address();
    private final Address unwrapDst = new Address();

    /** The last direct buffer seen in one role and where its memory starts. */
    private static final class Address {
        private ByteBuffer buffer;
        private long address;

        long of(ByteBuffer b) {
            if (b != buffer) {
                address = Native.bufferAddress(b);
                buffer = b;
            }
            return address;
        }
    }

    private static ByteBuffer at(ByteBuffer single, ByteBuffer[] bufs, int i) {
        return single != null ? single : bufs[i];
    }

    /** Wraps from {@code single}, or from {@code srcs[offset..offset+length)} when it is null. */
    long wrap(long p, ByteBuffer single, ByteBuffer[] srcs, int offset, int length, ByteBuffer dst)
            throws SSLException {
        int first = -1;
        int count = 0;
        int total = 0;
        for (int i = offset; i < offset + length; i++) {
            int r = at(single, srcs, i).remaining();
            if (r > 0) {
                if (first < 0) {
                    first = i;
                }
                count++;
                total += r;
            }
        }
        ByteBuffer src = first < 0 ? null : at(single, srcs, first);
        boolean gather = count > 1 && src.remaining() < TlsBridgeSession.APPLICATION_BUFFER_SIZE;
        boolean staged = gather || (src != null && !src.isDirect() && !src.hasArray());
        if (staged) {
            src = gather(single != null ? new ByteBuffer[] {single} : srcs, first, offset + length, total);
        }
        int dpos = dst.position();
        int dlen = Math.min(dst.remaining(), Results.MAX_LEN);
        int spos = src == null ? 0 : src.position();
        int slen = src == null ? 0 : Math.min(src.remaining(), Results.MAX_LEN);
        boolean srcDirect = src != null && src.isDirect();
        boolean dstDirect = dst.isDirect();
        long r = Native.wrap(p, srcDirect ? wrapSrc.of(src) : 0,
                src != null && !srcDirect ? src.array() : null,
                src == null || srcDirect ? spos : src.arrayOffset() + spos, slen,
                dstDirect ? wrapDst.of(dst) : 0, dstDirect ? null : dst.array(),
                dstDirect ? dpos : dst.arrayOffset() + dpos, dlen);
        int consumed = Results.consumed(r);
        if (consumed > 0) {
            if (staged && single == null) {
                advance(srcs, first, offset + length, consumed);
            } else if (staged) {
                single.position(single.position() + consumed);
            } else {
                src.position(spos + consumed);
            }
        }
        dst.position(dpos + Results.produced(r));
        return r;
    }

    /** Unwraps into {@code single}, or into {@code dsts[offset..offset+length)} when it is null. */
    long unwrap(long p, ByteBuffer src, ByteBuffer single, ByteBuffer[] dsts, int offset, int length)
            throws SSLException {
        int first = -1;
        long total = 0;
        for (int i = offset; i < offset + length; i++) {
            int r = at(single, dsts, i).remaining();
            if (r > 0) {
                if (first < 0) {
                    first = i;
                }
                total += r;
            }
        }
        ByteBuffer dst = first < 0 ? null : at(single, dsts, first);
        boolean scatter = dst != null && dst.remaining() < TlsBridgeSession.APPLICATION_BUFFER_SIZE
                && total > dst.remaining();
        if (scatter) {
            dst = stage2();
            dst.clear().limit((int) Math.min(TlsBridgeSession.APPLICATION_BUFFER_SIZE, total));
        }
        ByteBuffer in = src;
        if (!src.isDirect() && !src.hasArray()) {
            in = stage();
            in.clear();
            int n = Math.min(src.remaining(), in.capacity());
            in.put(src.duplicate().limit(src.position() + n)).flip();
        }
        int spos = in.position();
        int slen = Math.min(in.remaining(), Results.MAX_LEN);
        int dpos = dst == null ? 0 : dst.position();
        int dlen = dst == null ? 0 : Math.min(dst.remaining(), Results.MAX_LEN);
        boolean inDirect = in.isDirect();
        boolean dstDirect = dst != null && dst.isDirect();
        long r = Native.unwrap(p, inDirect ? unwrapSrc.of(in) : 0, inDirect ? null : in.array(),
                inDirect ? spos : in.arrayOffset() + spos, slen,
                dstDirect ? unwrapDst.of(dst) : 0,
                dst != null && !dstDirect ? dst.array() : null,
                dst == null || dstDirect ? dpos : dst.arrayOffset() + dpos, dlen);
        int produced = Results.produced(r);
        src.position(src.position() + Results.consumed(r));
        if (scatter) {
            dst.limit(produced).position(0);
            scatter(dst, dsts, first, offset + length);
        } else if (dst != null) {
            dst.position(dpos + produced);
        }
        return r;
    }

    static void checkArray(ByteBuffer[] bufs, int offset, int length) {
        if (bufs == null) {
            throw new IllegalArgumentException("buffer array is null");
        }
        if (offset < 0 || length < 0 || offset > bufs.length - length) {
            throw new IndexOutOfBoundsException("offset " + offset + ", length " + length + ", size " + bufs.length);
        }
        for (int i = offset; i < offset + length; i++) {
            if (bufs[i] == null) {
                throw new IllegalArgumentException("buffer " + i + " is null");
            }
        }
    }

    private ByteBuffer stage() {
        if (stage == null) {
            stage = ByteBuffer.allocateDirect(STAGE_SIZE);
        }
        return stage;
    }

    private ByteBuffer stage2() {
        if (stage2 == null) {
            stage2 = ByteBuffer.allocateDirect(TlsBridgeSession.APPLICATION_BUFFER_SIZE);
        }
        return stage2;
    }

    /** Several small sources make one record, not one record each. */
    private ByteBuffer gather(ByteBuffer[] srcs, int from, int to, int total) {
        ByteBuffer s = stage();
        s.clear().limit(Math.min(TlsBridgeSession.APPLICATION_BUFFER_SIZE, total));
        for (int i = from; i < to && s.hasRemaining(); i++) {
            ByteBuffer b = srcs[i].duplicate();
            if (b.remaining() > s.remaining()) {
                b.limit(b.position() + s.remaining());
            }
            s.put(b);
        }
        return s.flip();
    }

    private static void advance(ByteBuffer[] srcs, int from, int to, int n) {
        for (int i = from; i < to && n > 0; i++) {
            int k = Math.min(n, srcs[i].remaining());
            srcs[i].position(srcs[i].position() + k);
            n -= k;
        }
    }

    private static void scatter(ByteBuffer from, ByteBuffer[] dsts, int first, int end) {
        for (int i = first; i < end && from.hasRemaining(); i++) {
            ByteBuffer d = dsts[i];
            if (!d.hasRemaining()) {
                continue;
            }
            ByteBuffer part = from.duplicate();
            int n = Math.min(d.remaining(), part.remaining());
            part.limit(part.position() + n);
            d.put(part);
            from.position(from.position() + n);
        }
    }
}
