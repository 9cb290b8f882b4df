package org.tlsbridge.test;

import java.util.function.LongSupplier;
import org.tlsbridge.internal.Diagnostics;

/**
 * Live native object counts (SSL_CTX, SSL, key material) after garbage
 * collection: a count only falls once the Cleaner has run for what became
 * unreachable, so readings are taken after System.gc() and a short wait.
 */
public final class LiveCounts {
    public final long contexts;
    public final long connections;
    public final long keys;

    private LiveCounts(long contexts, long connections, long keys) {
        this.contexts = contexts;
        this.connections = connections;
        this.keys = keys;
    }

    public static LiveCounts now() {
        return new LiveCounts(Diagnostics.liveContexts(), Diagnostics.liveConnections(), Diagnostics.liveKeys());
    }

    /** The counts once three readings in a row, each after a GC, agree (at most ~10 s). */
    public static LiveCounts settled() throws InterruptedException {
        LiveCounts last = collect();
        int same = 0;
        for (int i = 0; i < 100 && same < 3; i++) {
            LiveCounts c = collect();
            same = c.equals(last) ? same + 1 : 0;
            last = c;
        }
        return last;
    }

    /** Collects until the count equals expected, or ~10 s pass; returns the last reading. */
    public static long await(LongSupplier count, long expected) throws InterruptedException {
        long v = count.getAsLong();
        for (int i = 0; i < 100 && v != expected; i++) {
            collect();
            v = count.getAsLong();
        }
        return v;
    }

    private static LiveCounts collect() throws InterruptedException {
        System.gc();
        Thread.sleep(100);
        return now();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LiveCounts && ((LiveCounts) o).contexts == contexts
                && ((LiveCounts) o).connections == connections && ((LiveCounts) o).keys == keys;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(contexts * 31 + connections * 7 + keys);
    }

    @Override
    public String toString() {
        return "contexts=" + contexts + " connections=" + connections + " keys=" + keys;
    }
}
