package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.security.Provider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;

/**
 * Randomized damage on the wire: a tlsbridge engine talks to an honest peer
 * (SunJSSE or tlsbridge) in memory while the peer's records are bit-flipped,
 * truncated, re-lengthed, duplicated, reordered, dropped, retyped or mixed
 * with garbage, and always delivered in random cuts. The engine must answer
 * every call with a correct result or an SSLException, never hand out
 * plaintext the peer did not send, and end closed. Sessions with no damage
 * must complete with every byte intact. Each session has its own seed,
 * printed on failure; rerun one with -Dtlsbridge.mutation.seed=N
 * -Dtlsbridge.mutation.sessions=1.
 */
class UnwrapMutationTest {
    private static final long SEED = Long.getLong("tlsbridge.mutation.seed", 0x7b5eedL);
    private static final int SESSIONS = Integer.getInteger("tlsbridge.mutation.sessions", 400);
    private static final long BUDGET_NS = Duration.ofSeconds(Long.getLong("tlsbridge.mutation.seconds", 5)).toNanos();

    enum Damage { NONE, BITFLIP, TRUNCATE, LENGTH, DUPLICATE, REORDER, DROP, GARBAGE, TYPE, VERSION }

    private final Map<String, Integer> outcomes = new TreeMap<>();

    @Test
    void damagedRecordsEndInSslExceptionOrCorrectData() {
        System.out.println("UnwrapMutationTest seed=" + SEED);
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            long start = System.nanoTime();
            int n = 0;
            for (; n < SESSIONS && (n < 40 || System.nanoTime() - start < BUDGET_NS); n++) {
                long seed = SEED + n;
                Session s = new Session(new Random(seed * 0x9e3779b97f4a7c15L)); // consecutive seeds start alike
                long t0 = System.nanoTime();
                try {
                    outcomes.merge(s.run(), 1, Integer::sum);
                    if (Boolean.getBoolean("tlsbridge.mutation.verbose")) {
                        System.out.println(seed + " " + s + ": " + (System.nanoTime() - t0) / 1000 + " us");
                    }
                } catch (AssertionError | RuntimeException e) {
                    throw new AssertionError("session seed " + seed + " (" + s + "): " + e, e);
                }
            }
            System.out.println("UnwrapMutationTest: " + n + " sessions in "
                    + (System.nanoTime() - start) / 1_000_000 + " ms: " + outcomes);
            assertTrue(outcomes.keySet().stream().anyMatch(k -> k.startsWith("NONE ok")), "undamaged sessions ran");
            assertTrue(outcomes.keySet().stream().anyMatch(k -> k.contains(" threw ")), "damage was detected");
        });
    }

    private static final class Session {
        final Random rnd;
        final boolean victimClient;
        final boolean peerSun;
        final boolean direct;
        final String protocol;
        final Damage damage;
        final int damageAt;
        final boolean cutDelivery;
        final SSLEngine victim;
        final SSLEngine peer;
        byte[] toVictim = new byte[0];
        byte[] toPeer = new byte[0];
        final List<byte[]> held = new ArrayList<>();
        int peerRecords;
        boolean truncated;
        boolean damaged;
        boolean victimFailed;
        String failure = "";
        boolean peerFailed;
        final ByteArrayOutputStream sent = new ByteArrayOutputStream();
        final ByteArrayOutputStream got = new ByteArrayOutputStream();
        int messagesLeft;
        boolean victimSpoke;

        Session(Random r) {
            rnd = r;
            victimClient = r.nextBoolean();
            peerSun = r.nextBoolean();
            direct = r.nextBoolean();
            protocol = r.nextBoolean() ? "TLSv1.3" : "TLSv1.2";
            Damage[] all = Damage.values();
            damage = r.nextInt(5) == 0 ? Damage.NONE : all[1 + r.nextInt(all.length - 1)];
            damageAt = r.nextInt(7);
            cutDelivery = r.nextBoolean();
            messagesLeft = 1 + r.nextInt(3);
            String key = r.nextBoolean() ? "rsa" : "ec";
            Provider mine = Contexts.TLSBRIDGE;
            Provider other = peerSun ? Contexts.sun() : Contexts.TLSBRIDGE;
            SSLContext clientCtx = Contexts.client(victimClient ? mine : other);
            SSLContext serverCtx = Contexts.server(victimClient ? other : mine, key);
            SSLEngine c = clientCtx.createSSLEngine("localhost", 443);
            c.setUseClientMode(true);
            c.setEnabledProtocols(new String[] {protocol});
            SSLEngine s = serverCtx.createSSLEngine();
            s.setUseClientMode(false);
            victim = victimClient ? c : s;
            peer = victimClient ? s : c;
        }

        @Override
        public String toString() {
            return "victim " + (victimClient ? "client" : "server") + ", peer " + (peerSun ? "SunJSSE" : "tlsbridge")
                    + ", " + protocol + ", damage " + damage + " at record " + damageAt
                    + (cutDelivery ? ", cut delivery" : "") + (direct ? ", direct" : ", heap");
        }

        ByteBuffer alloc(int n) {
            return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
        }

        String run() throws Exception {
            victim.beginHandshake();
            peer.beginHandshake();
            int idle = 0;
            for (int round = 0; round < 300 && idle < 3; round++) {
                boolean progress = peerStep();
                progress |= !victimFailed && victimStep();
                idle = progress ? 0 : idle + 1;
                if (victimFailed || (truncated && toVictim.length == 0)) {
                    break;
                }
            }
            byte[] delivered = got.toByteArray();
            byte[] expected = Arrays.copyOf(sent.toByteArray(), delivered.length);
            assertArrayEquals(expected, delivered, "plaintext the peer never sent");
            if (victimFailed) {
                afterFailure();
                return damage + " threw " + failure;
            }
            if (damage == Damage.NONE) {
                assertEquals(HandshakeStatus.NOT_HANDSHAKING, victim.getHandshakeStatus(), "handshake");
                assertEquals(protocol, victim.getSession().getProtocol());
                assertEquals(0, messagesLeft, "all messages sent");
                assertEquals(sent.size(), delivered.length, "every byte arrived");
            }
            closeCleanly();
            return damage + (damage != Damage.NONE && !damaged ? " not reached" : victimFailed ? " threw at close" : " ok");
        }

        /** The honest side: answers tasks, wraps flights and data, unwraps what the victim sent. */
        boolean peerStep() {
            if (peerFailed) {
                return false;
            }
            boolean progress = false;
            try {
                for (int i = 0; i < 8; i++) {
                    HandshakeStatus hs = peer.getHandshakeStatus();
                    if (hs == HandshakeStatus.NEED_TASK) {
                        runTasks(peer);
                        progress = true;
                    } else if (hs == HandshakeStatus.NEED_WRAP) {
                        progress |= peerWrap(ByteBuffer.allocate(0));
                    } else if (hs == HandshakeStatus.NOT_HANDSHAKING && messagesLeft > 0 && !peer.isOutboundDone()) {
                        byte[] m = new byte[1 + rnd.nextInt(20000)];
                        rnd.nextBytes(m);
                        sent.write(m, 0, m.length);
                        messagesLeft--;
                        ByteBuffer src = ByteBuffer.wrap(m);
                        while (src.hasRemaining() && peerWrap(src)) {
                            progress = true;
                        }
                    } else {
                        break;
                    }
                }
                if (toPeer.length > 0) {
                    ByteBuffer in = ByteBuffer.wrap(toPeer);
                    ByteBuffer app = ByteBuffer.allocate(peer.getSession().getApplicationBufferSize() * 2);
                    for (int i = 0; i < 16 && in.hasRemaining(); i++) {
                        SSLEngineResult r = peer.unwrap(in, app);
                        app.clear();
                        if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                            runTasks(peer);
                        }
                        if (r.getStatus() != Status.OK || r.bytesConsumed() == 0 && in.hasRemaining()
                                && peer.getHandshakeStatus() != HandshakeStatus.NEED_UNWRAP) {
                            break;
                        }
                    }
                    progress |= in.position() > 0;
                    toPeer = Arrays.copyOfRange(toPeer, in.position(), toPeer.length);
                }
            } catch (SSLException e) {
                peerFailed = true; // the victim's alert, or what damage made it send
            }
            return progress;
        }

        boolean peerWrap(ByteBuffer src) throws SSLException {
            ByteBuffer net = ByteBuffer.allocate(peer.getSession().getPacketBufferSize());
            SSLEngineResult r = peer.wrap(src, net);
            byte[] out = Arrays.copyOf(net.array(), net.position());
            splitRecords(out);
            return r.bytesProduced() > 0 || r.bytesConsumed() > 0;
        }

        /** Cuts the peer's bytes into records and damages the chosen one on its way. */
        void splitRecords(byte[] b) {
            int off = 0;
            while (off < b.length) {
                int len = off + 5 <= b.length ? 5 + ((b[off + 3] & 0xff) << 8 | (b[off + 4] & 0xff)) : b.length - off;
                len = Math.min(len, b.length - off);
                byte[] rec = Arrays.copyOfRange(b, off, off + len);
                off += len;
                if (!held.isEmpty()) { // a REORDER: the held record goes after this one
                    send(rec);
                    held.forEach(this::send);
                    held.clear();
                    continue;
                }
                if (peerRecords++ == damageAt && damage != Damage.NONE) {
                    damaged = true;
                    damage(rec);
                } else {
                    send(rec);
                }
            }
        }

        void damage(byte[] rec) {
            switch (damage) {
                case BITFLIP -> {
                    int bit = rnd.nextInt(rec.length * 8);
                    rec[bit / 8] ^= (byte) (1 << (bit % 8));
                    send(rec);
                }
                case TRUNCATE -> {
                    send(Arrays.copyOf(rec, rnd.nextInt(rec.length)));
                    truncated = true;
                }
                case LENGTH -> {
                    int[] lengths = {0, 1, rec.length - 6, rec.length - 4, 16384 + 2048, 16384 + 2049, 0xffff,
                        rnd.nextInt(0x10000)};
                    int l = lengths[rnd.nextInt(lengths.length)];
                    if (rec.length >= 5) {
                        rec[3] = (byte) (l >> 8);
                        rec[4] = (byte) l;
                    }
                    send(rec);
                }
                case DUPLICATE -> {
                    send(rec);
                    send(rec.clone());
                }
                case REORDER -> held.add(rec);
                case DROP -> { }
                case GARBAGE -> {
                    byte[] g = new byte[1 + rnd.nextInt(64)];
                    rnd.nextBytes(g);
                    send(rnd.nextBoolean() ? g : rec);
                    send(rnd.nextBoolean() ? rec : g);
                }
                case TYPE -> {
                    int[] types = {20, 21, 22, 23, 24, 0, 255, rnd.nextInt(256)};
                    rec[0] = (byte) types[rnd.nextInt(types.length)];
                    send(rec);
                }
                case VERSION -> {
                    if (rec.length >= 3) {
                        rec[1] = (byte) rnd.nextInt(256);
                        rec[2] = (byte) rnd.nextInt(256);
                    }
                    send(rec);
                }
                default -> send(rec);
            }
        }

        void send(byte[] rec) {
            if (truncated) {
                return; // nothing follows a truncation
            }
            byte[] n = Arrays.copyOf(toVictim, toVictim.length + rec.length);
            System.arraycopy(rec, 0, n, toVictim.length, rec.length);
            toVictim = n;
        }

        /** The engine under test, driven as a careful JSSE caller does. */
        boolean victimStep() {
            boolean progress = false;
            boolean wantAll = false;
            try {
                for (int i = 0; i < 16; i++) {
                    HandshakeStatus hs = victim.getHandshakeStatus();
                    if (hs == HandshakeStatus.NEED_TASK) {
                        runTasks(victim);
                        progress = true;
                    } else if (hs == HandshakeStatus.NEED_WRAP
                            || hs == HandshakeStatus.NOT_HANDSHAKING && !victimSpoke && !victim.isOutboundDone()
                            && victim.getSession().getProtocol().startsWith("TLS")) {
                        victimSpoke |= hs == HandshakeStatus.NOT_HANDSHAKING;
                        ByteBuffer src = ByteBuffer.wrap(hs == HandshakeStatus.NEED_WRAP ? new byte[0] : new byte[100]);
                        ByteBuffer net = alloc(victim.getSession().getPacketBufferSize());
                        SSLEngineResult r = victim.wrap(src, net);
                        checkResult(r, src.position(), net.position());
                        net.flip();
                        byte[] out = new byte[net.remaining()];
                        net.get(out);
                        byte[] n = Arrays.copyOf(toPeer, toPeer.length + out.length);
                        System.arraycopy(out, 0, n, toPeer.length, out.length);
                        toPeer = n;
                        if (r.bytesProduced() == 0 && r.bytesConsumed() == 0) {
                            break;
                        }
                        progress = true;
                    } else if (toVictim.length > 0 && !victim.isInboundDone()) {
                        int avail = toVictim.length;
                        int cut = cutDelivery && !wantAll ? 1 + rnd.nextInt(avail) : avail;
                        int slack = rnd.nextInt(8);
                        ByteBuffer in = alloc(cut + slack);
                        in.position(slack);
                        in.put(toVictim, 0, cut).flip().position(slack);
                        int appSize = rnd.nextInt(4) == 0 ? rnd.nextInt(64)
                                : victim.getSession().getApplicationBufferSize();
                        ByteBuffer app = alloc(appSize);
                        SSLEngineResult r = victim.unwrap(in, app);
                        checkResult(r, in.position() - slack, app.position());
                        app.flip();
                        byte[] plain = new byte[app.remaining()];
                        app.get(plain);
                        got.write(plain, 0, plain.length);
                        toVictim = Arrays.copyOfRange(toVictim, r.bytesConsumed(), toVictim.length);
                        if (r.getStatus() == Status.BUFFER_UNDERFLOW) {
                            if (cut == avail) {
                                break; // a whole record has not arrived yet
                            }
                            wantAll = true;
                        } else if (r.getStatus() == Status.BUFFER_OVERFLOW) {
                            assertTrue(appSize < victim.getSession().getApplicationBufferSize(),
                                    "BUFFER_OVERFLOW with an application buffer of the advertised size");
                        } else if (r.getStatus() == Status.CLOSED) {
                            break;
                        } else if (r.bytesConsumed() == 0 && r.bytesProduced() == 0
                                && r.getHandshakeStatus() != HandshakeStatus.NEED_TASK
                                && r.getHandshakeStatus() != HandshakeStatus.NEED_WRAP) {
                            break;
                        }
                        progress |= r.bytesConsumed() > 0;
                    } else {
                        break;
                    }
                }
            } catch (SSLException e) {
                victimFailed = true;
                failure = e.getClass().getSimpleName();
            }
            return progress;
        }

        static void checkResult(SSLEngineResult r, int consumed, int produced) {
            assertEquals(consumed, r.bytesConsumed(), "bytesConsumed matches the source position");
            assertEquals(produced, r.bytesProduced(), "bytesProduced matches the destination position");
            if (r.getStatus() == Status.BUFFER_UNDERFLOW || r.getStatus() == Status.BUFFER_OVERFLOW) {
                assertEquals(0, r.bytesConsumed(), r.getStatus() + " consumes nothing");
                assertEquals(0, r.bytesProduced(), r.getStatus() + " produces nothing");
            }
        }

        /** After an SSLException the engine sends its alert and is done both ways. */
        void afterFailure() throws Exception {
            victim.closeOutbound();
            for (int i = 0; i < 4 && !victim.isOutboundDone(); i++) {
                ByteBuffer net = alloc(victim.getSession().getPacketBufferSize());
                SSLEngineResult r = victim.wrap(ByteBuffer.allocate(0), net);
                assertEquals(Status.CLOSED, r.getStatus(), "wrap after a failure");
            }
            assertTrue(victim.isOutboundDone(), "outbound done after a failure");
            try {
                SSLEngineResult r = victim.unwrap(ByteBuffer.wrap(new byte[] {23, 3, 3, 0, 1, 0}),
                        alloc(victim.getSession().getApplicationBufferSize()));
                assertEquals(Status.CLOSED, r.getStatus(), "unwrap after a failure");
            } catch (SSLException expected) {
                // also a correct answer
            }
            try {
                victim.closeInbound();
            } catch (SSLException truncation) {
                // no close_notify came: JSSE reports the possible truncation
            }
            assertTrue(victim.isInboundDone(), "inbound done after a failure");
        }

        void closeCleanly() throws Exception {
            victim.closeOutbound();
            for (int i = 0; i < 4 && !victim.isOutboundDone(); i++) {
                ByteBuffer net = alloc(victim.getSession().getPacketBufferSize());
                try {
                    victim.wrap(ByteBuffer.allocate(0), net);
                } catch (SSLException e) {
                    victimFailed = true; // e.g. damage that only showed at close
                    break;
                }
            }
            assertTrue(victim.isOutboundDone() || victimFailed, "outbound done after closeOutbound");
            try {
                victim.closeInbound();
            } catch (SSLException truncation) {
                // the peer's close_notify did not come (or was damaged away)
            }
            assertTrue(victim.isInboundDone(), "inbound done after closeInbound");
        }

        static void runTasks(SSLEngine e) {
            Runnable t;
            for (int i = 0; i < 16 && (t = e.getDelegatedTask()) != null; i++) {
                t.run();
            }
        }
    }
}
