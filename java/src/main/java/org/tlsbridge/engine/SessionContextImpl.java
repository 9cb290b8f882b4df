package org.tlsbridge.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntBinaryOperator;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;

/**
 * The sessions of one side of a context, as JSSE lists them. OpenSSL keeps
 * the resumable state; this keeps what Java code may ask for by id, with the
 * same size and timeout limits, which are also pushed to OpenSSL's cache.
 */
public final class SessionContextImpl implements SSLSessionContext {
    private static final int DEFAULT_SIZE = 20480;
    private static final int DEFAULT_TIMEOUT = 86400;

    private final Map<ByteBuffer, TlsBridgeSession> sessions = new LinkedHashMap<>(16, 0.75f, true);
    private final IntBinaryOperator nativeLimits;
    private int size = DEFAULT_SIZE;
    private int timeout = DEFAULT_TIMEOUT;

    /** @param nativeLimits receives (size, timeoutSeconds) whenever either changes, or null */
    public SessionContextImpl(IntBinaryOperator nativeLimits) {
        this.nativeLimits = nativeLimits;
    }

    synchronized void add(TlsBridgeSession s) {
        if (s.id.length == 0) {
            return;
        }
        sessions.put(ByteBuffer.wrap(s.id), s);
        trim();
    }

    synchronized void remove(TlsBridgeSession s) {
        sessions.remove(ByteBuffer.wrap(s.id), s);
    }

    boolean expired(TlsBridgeSession s) {
        int t = timeout;
        return t > 0 && System.currentTimeMillis() - s.getCreationTime() > t * 1000L;
    }

    private void trim() {
        Iterator<TlsBridgeSession> it = sessions.values().iterator();
        while (it.hasNext()) {
            TlsBridgeSession s = it.next();
            if (expired(s) || (size > 0 && sessions.size() > size)) {
                it.remove();
            }
        }
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
        trim();
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
            trim();
        }
        if (nativeLimits != null) {
            nativeLimits.applyAsInt(getSessionCacheSize(), seconds);
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
            trim();
        }
        if (nativeLimits != null) {
            nativeLimits.applyAsInt(entries, getSessionTimeout());
        }
    }

    @Override
    public synchronized int getSessionCacheSize() {
        return size;
    }
}
