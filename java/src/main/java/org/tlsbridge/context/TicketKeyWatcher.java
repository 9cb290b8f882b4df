package org.tlsbridge.context;

import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;
import javax.net.ssl.SSLException;
import org.tlsbridge.internal.Native;

/**
 * Reads session-ticket key files again when they change (docs/fleet.md).
 * One daemon thread for the JVM stats each context's file every
 * {@code tlsbridge.ticketKeys.checkMillis} (5000 by default), so handshakes
 * never touch the file system and a rotation is live within one period. A
 * refused file is logged once and the keys in use stay. Contexts are held
 * weakly: a context nobody uses any more stops being watched.
 */
final class TicketKeyWatcher {
    private static final Logger LOG = Logger.getLogger("org.tlsbridge");
    private static final long PERIOD_MS = Math.max(50, Long.getLong("tlsbridge.ticketKeys.checkMillis", 5000));
    private static final List<WeakReference<ContextState>> WATCHED = new ArrayList<>();
    private static Thread thread;

    private TicketKeyWatcher() {}

    static synchronized void watch(ContextState s) {
        for (WeakReference<ContextState> r : WATCHED) {
            if (r.get() == s) {
                return;
            }
        }
        WATCHED.add(new WeakReference<>(s));
        if (thread == null) {
            thread = new Thread(TicketKeyWatcher::run, "tlsbridge-ticket-keys");
            thread.setDaemon(true);
            thread.start();
        }
    }

    private static synchronized List<ContextState> live() {
        List<ContextState> out = new ArrayList<>(WATCHED.size());
        WATCHED.removeIf(r -> r.get() == null);
        for (WeakReference<ContextState> r : WATCHED) {
            ContextState s = r.get();
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    private static void run() {
        while (true) {
            try {
                Thread.sleep(PERIOD_MS);
            } catch (InterruptedException e) {
                return;
            }
            for (ContextState s : live()) {
                check(s);
            }
        }
    }

    private static void check(ContextState s) {
        try {
            if (Native.ctxTicketKeysRefresh(s.handle())) {
                LOG.info("tlsbridge: new session ticket keys from " + s.ticketKeyFile());
            }
        } catch (SSLException e) {
            LOG.warning("tlsbridge: " + e.getMessage() + "; the session ticket keys in use stay");
        } finally {
            Reference.reachabilityFence(s);
        }
    }
}
