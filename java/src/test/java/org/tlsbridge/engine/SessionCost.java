package org.tlsbridge.engine;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.security.Provider;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * In-memory server handshakes, full or resumed, TLS 1.3 or 1.2, for
 * SessionCostTest and for counting JNI crossings from outside (main: run
 * under uprobes on the library's JNI functions with n and then 0 handshakes
 * after the same warm-up; the difference is the crossings of n handshakes;
 * docs/record-path.md says how).
 * The server engine is wrapped so the Java heap it allocates (creation,
 * wrap, unwrap, delegated tasks, status polls) is counted apart from the
 * client's.
 */
final class SessionCost {
    final String protocol;
    final boolean resumed;
    final SSLContext client;
    final SSLContext server;
    private int port = 1;
    long serverBytes;

    SessionCost(Provider p, String protocol, boolean resumed) {
        this(p, p, protocol, resumed);
    }

    SessionCost(Provider clientProvider, Provider p, String protocol, boolean resumed) {
        this.protocol = protocol;
        this.resumed = resumed;
        this.client = Contexts.client(clientProvider);
        this.server = Contexts.server(p, "rsa");
    }

    /** One connection; returns the server's session. Resumed mode reuses one peer key, full mode never does. */
    SSLSession connect() throws SSLException {
        SSLEngine c = client.createSSLEngine("localhost", resumed ? 443 : 10000 + port++);
        c.setUseClientMode(true);
        c.setEnabledProtocols(new String[] {protocol});
        Counted s = new Counted(this);
        EnginePair pair = new EnginePair(c, s, false);
        pair.handshake();
        c.closeOutbound();
        s.closeOutbound();
        return s.getSession();
    }

    /** n connections after a priming one; fails when a connection did not resume (or did) as asked. */
    long run(int n) throws SSLException {
        connect();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            SSLSession s = connect();
            if (TlsBridgeProvider.isResumed(s) != resumed && s instanceof TlsBridgeSession) {
                throw new IllegalStateException(protocol + (resumed ? ": not resumed" : ": resumed"));
            }
        }
        return System.nanoTime() - t0;
    }

    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static long allocated() {
        return MX.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    /** The server engine, every call's allocation counted. */
    static final class Counted extends SSLEngine {
        private final SessionCost owner;
        private final SSLEngine e;

        Counted(SessionCost owner) {
            this.owner = owner;
            long a = allocated();
            e = owner.server.createSSLEngine();
            e.setUseClientMode(false);
            owner.serverBytes += allocated() - a;
        }

        @Override
        public SSLEngineResult wrap(ByteBuffer[] srcs, int off, int len, ByteBuffer dst) throws SSLException {
            long a = allocated();
            try {
                return e.wrap(srcs, off, len, dst);
            } finally {
                owner.serverBytes += allocated() - a;
            }
        }

        @Override
        public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int off, int len) throws SSLException {
            long a = allocated();
            try {
                return e.unwrap(src, dsts, off, len);
            } finally {
                owner.serverBytes += allocated() - a;
            }
        }

        @Override
        public Runnable getDelegatedTask() {
            Runnable t = e.getDelegatedTask();
            return t == null ? null : () -> {
                long a = allocated();
                t.run();
                owner.serverBytes += allocated() - a;
            };
        }

        @Override
        public HandshakeStatus getHandshakeStatus() {
            long a = allocated();
            HandshakeStatus h = e.getHandshakeStatus();
            owner.serverBytes += allocated() - a;
            return h;
        }

        @Override
        public void beginHandshake() throws SSLException {
            long a = allocated();
            e.beginHandshake();
            owner.serverBytes += allocated() - a;
        }

        @Override
        public SSLSession getSession() {
            return e.getSession();
        }

        @Override
        public void closeInbound() throws SSLException {
            e.closeInbound();
        }

        @Override
        public boolean isInboundDone() {
            return e.isInboundDone();
        }

        @Override
        public void closeOutbound() {
            e.closeOutbound();
        }

        @Override
        public boolean isOutboundDone() {
            return e.isOutboundDone();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return e.getSupportedCipherSuites();
        }

        @Override
        public String[] getEnabledCipherSuites() {
            return e.getEnabledCipherSuites();
        }

        @Override
        public void setEnabledCipherSuites(String[] s) {
            e.setEnabledCipherSuites(s);
        }

        @Override
        public String[] getSupportedProtocols() {
            return e.getSupportedProtocols();
        }

        @Override
        public String[] getEnabledProtocols() {
            return e.getEnabledProtocols();
        }

        @Override
        public void setEnabledProtocols(String[] p) {
            e.setEnabledProtocols(p);
        }

        @Override
        public void setUseClientMode(boolean mode) {
            e.setUseClientMode(mode);
        }

        @Override
        public boolean getUseClientMode() {
            return e.getUseClientMode();
        }

        @Override
        public void setNeedClientAuth(boolean need) {
            e.setNeedClientAuth(need);
        }

        @Override
        public boolean getNeedClientAuth() {
            return e.getNeedClientAuth();
        }

        @Override
        public void setWantClientAuth(boolean want) {
            e.setWantClientAuth(want);
        }

        @Override
        public boolean getWantClientAuth() {
            return e.getWantClientAuth();
        }

        @Override
        public void setEnableSessionCreation(boolean flag) {
            e.setEnableSessionCreation(flag);
        }

        @Override
        public boolean getEnableSessionCreation() {
            return e.getEnableSessionCreation();
        }
    }

    /**
     * args: TLSv1.3|TLSv1.2 full|resumed n — warm-up of 200 connections,
     * then n more. The client is SunJSSE's, so every crossing counted is the
     * server's.
     */
    public static void main(String[] args) throws Exception {
        SessionCost c = new SessionCost(Contexts.sun(), Contexts.TLSBRIDGE, args[0], args[1].equals("resumed"));
        c.run(200);
        System.out.println("ready");
        c.run(Integer.parseInt(args[2]));
        System.out.println("done");
    }
}
