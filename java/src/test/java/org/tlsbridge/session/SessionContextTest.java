package org.tlsbridge.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.Provider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.TestPki;

/** SSLSessionContext limits changed on a live context, and a second init, against SunJSSE. */
class SessionContextTest {
    private static EnginePair connect(SSLContext client, SSLContext server, String protocol, int port)
            throws Exception {
        EnginePair e = new EnginePair(client, server, false, "localhost", port);
        e.client.setEnabledProtocols(new String[] {protocol});
        e.handshake();
        e.send(e.server, new byte[4]); // a TLS 1.3 ticket rides along with data
        return e;
    }

    /**
     * SunJSSE keeps both session contexts across init (SSLContextImpl makes
     * them once, in its constructor), so a session made before a second init
     * resumes after it.
     */
    @ParameterizedTest
    @CsvSource({"SunJSSE, TLSv1.2", "SunJSSE, TLSv1.3", "TLSBridge, TLSv1.2", "TLSBridge, TLSv1.3"})
    void secondInitKeepsResumableSessions(String provider, String protocol) throws Exception {
        Provider p = "SunJSSE".equals(provider) ? Contexts.sun() : Contexts.TLSBRIDGE;
        TestPki pki = TestPki.get();
        SSLContext server = Contexts.server(p, "rsa");
        SSLContext client = Contexts.client(p);
        SSLSessionContext serverSessions = server.getServerSessionContext();
        SSLSessionContext clientSessions = client.getClientSessionContext();
        SSLSession first = connect(client, server, protocol, 8443).client.getSession();
        // the first pair is never closed: once the Cleaner has freed it, its
        // session must still resume (SunJSSE's does)
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        server.init(pki.keyManagers("rsa"), pki.trustManagers(), null);
        client.init(null, pki.trustManagers(), null);
        assertSame(serverSessions, server.getServerSessionContext());
        assertSame(clientSessions, client.getClientSessionContext());
        EnginePair again = connect(client, server, protocol, 8443);
        if (p == Contexts.TLSBRIDGE) {
            assertTrue(TlsBridgeProvider.isResumed(again.client.getSession()), "client resumed");
            assertTrue(TlsBridgeProvider.isResumed(again.server.getSession()), "server resumed");
        }
        if ("TLSv1.2".equals(protocol)) {
            assertArrayEquals(first.getId(), again.client.getSession().getId(), "TLS 1.2 resumption keeps the id");
        }
        assertEquals(first.getCreationTime(), again.client.getSession().getCreationTime(),
                "the resumed session is the one made before the second init");
    }

    /**
     * Without tickets the server resumes from its own cache, by session id
     * (TLS 1.2) or stateful ticket (TLS 1.3): the resumed session still
     * reports the full handshake's chains, and the cache's size limit holds.
     */
    @ParameterizedTest
    @CsvSource({"TLSv1.2", "TLSv1.3"})
    void statefulServerCache(String protocol) throws Exception {
        SSLContext server = Contexts.serverWith("tlsbridge.sessionTickets", "false", "rsa");
        SSLContext client = Contexts.clientWithCert(Contexts.TLSBRIDGE);
        EnginePair first = new EnginePair(client, server, false, "localhost", 6001);
        first.client.setEnabledProtocols(new String[] {protocol});
        first.server.setNeedClientAuth(true);
        first.handshake();
        first.send(first.server, new byte[4]);
        EnginePair again = new EnginePair(client, server, false, "localhost", 6001);
        again.client.setEnabledProtocols(new String[] {protocol});
        again.server.setNeedClientAuth(true);
        again.handshake();
        SSLSession a = first.server.getSession();
        SSLSession b = again.server.getSession();
        assertTrue(TlsBridgeProvider.isResumed(b), "server resumed from its cache");
        assertArrayEquals(a.getLocalCertificates(), b.getLocalCertificates());
        assertArrayEquals(a.getPeerCertificates(), b.getPeerCertificates());
        assertEquals(2, b.getPeerCertificates().length, "client chain: leaf + CA");

        server.getServerSessionContext().setSessionCacheSize(1);
        connect(client, server, protocol, 6002);
        connect(client, server, protocol, 6003); // pushes 6002's session out of the server's cache
        assertFalse(TlsBridgeProvider.isResumed(connect(client, server, protocol, 6002).server.getSession()),
                "evicted from the server cache");
    }

    /**
     * Limits set while handshakes run: nothing breaks, and the new values
     * govern the sessions made afterwards.
     */
    @Test
    void limitsChangedUnderLoad() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Future<Integer>> workers = new ArrayList<>();
        try {
            for (int w = 0; w < 2; w++) {
                int base = 9000 + w * 100;
                workers.add(pool.submit(() -> {
                    int n = 0;
                    while (!stop.get()) {
                        connect(client, server, n % 2 == 0 ? "TLSv1.2" : "TLSv1.3", base + n % 7);
                        n++;
                    }
                    return n;
                }));
            }
            Future<?> tuner = pool.submit(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                while (!stop.get()) {
                    for (SSLSessionContext c : new SSLSessionContext[] {server.getServerSessionContext(),
                            client.getClientSessionContext()}) {
                        c.setSessionCacheSize(r.nextInt(4));
                        c.setSessionTimeout(r.nextInt(3) * 100);
                    }
                }
                return null;
            });
            Thread.sleep(3000);
            stop.set(true);
            tuner.get(60, TimeUnit.SECONDS);
            for (Future<Integer> f : workers) {
                assertTrue(f.get(60, TimeUnit.SECONDS) > 0, "handshakes ran");
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }

        for (SSLSessionContext c : new SSLSessionContext[] {server.getServerSessionContext(),
                client.getClientSessionContext()}) {
            c.setSessionCacheSize(0);
            c.setSessionTimeout(0);
        }
        // A cache of one: the second peer's session pushes the first one's out.
        client.getClientSessionContext().setSessionCacheSize(1);
        connect(client, server, "TLSv1.2", 7001);
        connect(client, server, "TLSv1.2", 7002);
        assertFalse(TlsBridgeProvider.isResumed(connect(client, server, "TLSv1.2", 7001).client.getSession()),
                "evicted by the size limit");
        assertTrue(TlsBridgeProvider.isResumed(connect(client, server, "TLSv1.2", 7001).client.getSession()),
                "the newest session stays");
        client.getClientSessionContext().setSessionCacheSize(0);

        // A short server timeout applies to sessions made from then on (three seconds, not one:
        // the resumption inside it must not miss it on a loaded machine).
        server.getServerSessionContext().setSessionTimeout(3);
        for (String protocol : new String[] {"TLSv1.2", "TLSv1.3"}) {
            int port = "TLSv1.2".equals(protocol) ? 7003 : 7004;
            connect(client, server, protocol, port);
            assertTrue(TlsBridgeProvider.isResumed(connect(client, server, protocol, port).server.getSession()));
            Thread.sleep(4100);
            assertFalse(TlsBridgeProvider.isResumed(connect(client, server, protocol, port).server.getSession()),
                    protocol + ": expired by the server's new timeout");
        }
        assertEquals(3, server.getServerSessionContext().getSessionTimeout());
    }
}
