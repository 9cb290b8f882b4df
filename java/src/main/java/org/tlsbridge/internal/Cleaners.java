package org.tlsbridge.internal;

import java.lang.ref.Cleaner;

/** The one Cleaner thread: a safety net for native objects nobody closed. */
public final class Cleaners {
    public static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "tlsbridge-cleaner");
        t.setDaemon(true);
        return t;
    });

    private Cleaners() {
    }
}
