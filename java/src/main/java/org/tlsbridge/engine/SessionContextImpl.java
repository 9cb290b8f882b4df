package org.tlsbridge.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.IntBinaryOperator;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;

/**
 * The sessions of one side of a context, as JSSE lists them. The native
 * cache keeps the resumable state; this keeps what Java code may ask for by
 * id, and each full handshake's session by its origin token so a resumption
 * reports what that handshake established (OpenSSL keeps only the peer's leaf
 * in a ticket and picks no local certificate when it resumes). The same size
 * and timeout limits govern both maps and are pushed to the native cache.
 * One instance lives as long as its SSLContext, across init, as in SunJSSE.
 */
public final class SessionContextImpl implements SSLSessionContext {
    private static final int DEFAULT_SIZE = 20480;
    private static final int DEFAULT_TIMEOUT = 86400;

    /** Insertion order = creation order, so the eldest entry is the first to expire or go. */
    private final LinkedHashMap<ByteBuffer, TlsBridgeSession> sessions = new LinkedHashMap<>();
    private final LinkedHashMap<ByteBuffer, TlsBridgeSession> origins = new LinkedHashMap<>();
    private volatile IntBinaryOperator nativeLimits;
    private int size = DEFAULT_SIZE;
    private int timeout = DEFAULT_TIMEOUT;

    /** @param nativeLimits receives (size, timeoutSeconds) whenever either changes, or null */
    public SessionContextImpl(IntBinaryOperator nativeLimits) {
        this.nativeLimits = nativeLimits;
    }

    /**
     * Constant work per new session: the eldest entries are dropped while
     * the cache is over its size or they have expired, and the walk stops at
     * the first live one (a full walk per handshake cost a fifth of a
     * server's CPU once the cache held ten thousand sessions).
     */
    synchronized void add(TlsBridgeSession s) {
        if (s.id.length == 0) {
            return;
        }
        ByteBuffer key = ByteBuffer.wrap(s.id);
        sessions.remove(key); // a resumed session moves to the young end
        sessions.put(key, s);
        trim(System.currentTimeMillis());
    }

    /** A full handshake's session, under the token its resumptions will carry. */
    synchronized void remember(ByteBuffer origin, TlsBridgeSession s) {
        byte[] key = new byte[origin.remaining()];
        origin.duplicate().get(key);
        origins.put(ByteBuffer.wrap(key), s);
        trim(origins, System.currentTimeMillis());
    }

    /** The full handshake's session a resumption descends from, or null when it has expired or gone. */
    synchronized TlsBridgeSession origin(ByteBuffer origin) {
        TlsBridgeSession s = origins.get(origin);
        return s == null || expired(s) ? null : s;
    }

    /** Where a server side's session-ticket key file goes: the context of the latest init. */
    public interface TicketKeys {
        void load(String path) throws SSLException;
    }

    private volatile TicketKeys ticketKeys;

    public void ticketKeys(TicketKeys target) {
        ticketKeys = target;
    }

    /** Session-ticket keys from a file (see TlsBridgeProvider.setSessionTicketKeys). */
    public void loadTicketKeys(String path) throws SSLException {
        TicketKeys t = ticketKeys;
        if (t == null) {
            throw new SSLException("session ticket keys belong to a server session context");
        }
        t.load(path);
    }

    private volatile java.util.function.Consumer<byte[]> nativeForget;

    /** Where an invalidated session's origin token goes (the native caches of the latest init). */
    public void forgetter(java.util.function.Consumer<byte[]> target) {
        nativeForget = target;
    }

    /** After a second init: limits now go to the new context's native handle. */
    public SessionContextImpl rebind(IntBinaryOperator limits) {
        nativeLimits = limits;
        return this;
    }

    /**
     * SSLSession.invalidate(): neither this session nor any other from its full handshake
     * (TLS 1.3 tickets, TLS 1.2 resumptions) is offered or resumed again, as in SunJSSE.
     */
    void remove(TlsBridgeSession s) {
        byte[] origin = s.origin;
        synchronized (this) {
            sessions.remove(ByteBuffer.wrap(s.id), s);
            if (origin != null) {
                origins.remove(ByteBuffer.wrap(origin));
            }
        }
        java.util.function.Consumer<byte[]> n = nativeForget;
        if (origin != null && n != null) {
            n.accept(origin);
        }
    }

    boolean expired(TlsBridgeSession s) {
        return expired(s, System.currentTimeMillis());
    }

    private boolean expired(TlsBridgeSession s, long now) {
        int t = timeout;
        return t > 0 && now - s.getCreationTime() > t * 1000L;
    }

    private void trim(long now) {
        trim(sessions, now);
    }

    private void trim(LinkedHashMap<ByteBuffer, TlsBridgeSession> map, long now) {
        Iterator<TlsBridgeSession> it = map.values().iterator();
        while (it.hasNext()) {
            TlsBridgeSession s = it.next();
            if ((size > 0 && map.size() > size) || expired(s, now)) {
                it.remove();
            } else {
                break;
            }
        }
    }

    /** After a limit changes: every entry is looked at once (creation times need not be ordered by expiry). */
    private void sweep() {
        long now = System.currentTimeMillis();
        sessions.values().removeIf(s -> expired(s, now));
        origins.values().removeIf(s -> expired(s, now));
        trim(now);
        trim(origins, now);
    }

    @Override
    public synchronized SSLSession getSession(byte[] sessionId) {
        if (sessionId == null) {
            throw new NullPointerException("sessionId");
        }
        TlsBridgeSession s = sessions.get(ByteBuffer.wrap(sessionId));
        if (s != null && expired(s)) {
            sessions.remove(ByteBuffer.wrap(sessionId));
            return null;
        }
        return s;
    }

    @Override
    public synchronized Enumeration<byte[]> getIds() {
        trim(System.currentTimeMillis());
        List<byte[]> ids = new ArrayList<>(sessions.size());
        for (TlsBridgeSession s : sessions.values()) {
            ids.add(s.getId());
        }
        return Collections.enumeration(ids);
    }

    @Override
    public void setSessionTimeout(int seconds) {
        if (seconds < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        synchronized (this) {
            timeout = seconds;
            sweep();
        }
        IntBinaryOperator n = nativeLimits;
        if (n != null) {
            n.applyAsInt(getSessionCacheSize(), seconds);
        }
    }

    @Override
    public synchronized int getSessionTimeout() {
        return timeout;
    }

    @Override
    public void setSessionCacheSize(int entries) {
        if (entries < 0) {
            throw new IllegalArgumentException("size < 0");
        }
        synchronized (this) {
            size = entries;
            sweep();
        }
        IntBinaryOperator n = nativeLimits;
        if (n != null) {
            n.applyAsInt(entries, getSessionTimeout());
        }
    }

    @Override
    public synchronized int getSessionCacheSize() {
        return size;
    }
}
