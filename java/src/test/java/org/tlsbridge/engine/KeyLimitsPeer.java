package org.tlsbridge.engine;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.Provider;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.TestPki;

/**
 * One side of a KeyLimitsTest connection, in a JVM of its own so that jdk.tls.keyLimits (read once,
 * as SunJSSE reads it) comes from the -Djava.security.properties file the test passes.
 * Args: provider (TLSBridge|SunJSSE) kind (engine|socket) role (client|server) port bytes protocol suite.
 * The tlsbridge side sends {@link #data(int)}, closes its output and reads to the end; the SunJSSE
 * side reads everything, prints "RECEIVED n intact|CORRUPT" and closes.
 */
public final class KeyLimitsPeer {
    private KeyLimitsPeer() {
    }

    /** The bytes sent: ASCII lines, so openssl's stdout can be compared byte for byte. */
    static byte[] data(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i % 64 == 63 ? '\n' : 'a' + (i / 64 + i) % 26);
        }
        return b;
    }

    private static final TrustManager[] TRUST_ALL = {new X509TrustManager() {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }};

    public static void main(String[] a) throws Exception {
        Provider p = "SunJSSE".equals(a[0]) ? Contexts.sun() : Contexts.TLSBRIDGE;
        boolean engine = "engine".equals(a[1]);
        boolean server = "server".equals(a[2]);
        int port = Integer.parseInt(a[3]);
        int bytes = Integer.parseInt(a[4]);
        String[] protocols = {a[5]};
        String[] suites = {a[6]};
        boolean sender = p == Contexts.TLSBRIDGE;
        SSLContext ctx = server ? Contexts.create(p, "TLS", TestPki.get().keyManagers("rsa"), null)
                : Contexts.create(p, "TLS", null, TRUST_ALL);
        InetAddress lo = InetAddress.getLoopbackAddress();
        if (engine) {
            SocketChannel ch;
            if (server) {
                try (ServerSocketChannel l = ServerSocketChannel.open()) {
                    l.bind(new InetSocketAddress(lo, port));
                    System.out.println("LISTENING");
                    ch = l.accept();
                }
            } else {
                ch = SocketChannel.open(new InetSocketAddress(lo, port));
            }
            SSLEngine e = ctx.createSSLEngine("localhost", port);
            e.setUseClientMode(!server);
            e.setEnabledProtocols(protocols);
            e.setEnabledCipherSuites(suites);
            EngineChannel c = new EngineChannel(e, ch, false);
            c.handshake();
            System.out.println("SESSION " + e.getSession().getProtocol() + " " + e.getSession().getCipherSuite());
            if (sender) {
                byte[] d = data(bytes);
                for (int off = 0; off < d.length; off += 5000) {
                    c.write(Arrays.copyOfRange(d, off, Math.min(d.length, off + 5000)));
                }
                c.closeOutbound();
                c.readAll();
                ch.close();
            } else {
                report(c.readAll(), bytes);
                c.close();
            }
            return;
        }
        SSLSocket s;
        if (server) {
            try (ServerSocket l = ctx.getServerSocketFactory().createServerSocket(port, 1, lo)) {
                System.out.println("LISTENING");
                s = (SSLSocket) l.accept();
            }
        } else {
            s = (SSLSocket) ctx.getSocketFactory().createSocket(lo, port);
        }
        try (SSLSocket c = s) {
            c.setSoTimeout(30_000);
            c.setEnabledProtocols(protocols);
            c.setEnabledCipherSuites(suites);
            c.startHandshake();
            System.out.println("SESSION " + c.getSession().getProtocol() + " " + c.getSession().getCipherSuite());
            if (sender) {
                byte[] d = data(bytes);
                OutputStream o = c.getOutputStream();
                for (int off = 0; off < d.length; off += 5000) {
                    o.write(d, off, Math.min(5000, d.length - off));
                }
                o.flush();
                c.shutdownOutput();
                c.getInputStream().readAllBytes();
            } else {
                InputStream in = c.getInputStream();
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                byte[] buf = new byte[8192];
                for (int n; (n = in.read(buf)) > 0;) {
                    got.write(buf, 0, n);
                }
                report(got.toByteArray(), bytes);
            }
        }
    }

    private static void report(byte[] got, int bytes) {
        System.out.println("RECEIVED " + got.length + " " + (Arrays.equals(got, data(bytes)) ? "intact" : "CORRUPT"));
    }
}
