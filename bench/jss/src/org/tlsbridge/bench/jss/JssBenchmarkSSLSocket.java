package org.tlsbridge.bench.jss;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.mozilla.jss.CryptoManager;
import org.mozilla.jss.ssl.SSLCipher;
import org.mozilla.jss.ssl.SSLProtocolVariant;
import org.mozilla.jss.ssl.SSLServerSocket;
import org.mozilla.jss.ssl.SSLSocket;
import org.mozilla.jss.ssl.SSLVersion;
import org.mozilla.jss.ssl.SSLVersionRange;

/**
 * JSS's BenchmarkSSLSocket behaviour on Mozilla JSS's NSS socket
 * ("JSS.legacy"), so JSS's published table can be reproduced next to
 * tlsbridge: a thread per accepted connection (at most 150 alive), a forced
 * handshake, whatever input is already available read, one
 * "HTTP/1.1 200 OK" response of N 'a' bytes, close.
 *
 * <pre>JssBenchmarkSSLSocket JSS.legacy &lt;nickname&gt; &lt;port&gt; &lt;size&gt;</pre>
 * System properties: tb.nssdb (NSS database), tb.protocol (TLSv1.2 or
 * TLSv1.3), tb.suite (IANA name), both pinned as the only choice. Binds
 * 127.0.0.1 only. Prints "NEGOTIATED protocol suite" for a sample of
 * connections: the bulk cipher NSS reports must match the one pinned suite.
 */
public final class JssBenchmarkSSLSocket {
    private static final int LIMIT = 150;
    private static final AtomicLong CONNECTIONS = new AtomicLong();
    private static final AtomicLong LAST_SAMPLE = new AtomicLong(System.nanoTime());

    private JssBenchmarkSSLSocket() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4 || !args[0].equals("JSS.legacy")) {
            System.err.println("usage: JssBenchmarkSSLSocket JSS.legacy <nickname> <port> <size>");
            System.exit(1);
        }
        String nickname = args[1];
        int port = Integer.parseInt(args[2]);
        int size = Integer.parseInt(args[3]);
        CryptoManager.initialize(System.getProperty("tb.nssdb"));

        String protocol = System.getProperty("tb.protocol", "TLSv1.3");
        String suite = System.getProperty("tb.suite", "TLS_AES_128_GCM_SHA256");
        SSLVersion v = protocol.equals("TLSv1.2") ? SSLVersion.TLS_1_2 : SSLVersion.TLS_1_3;
        SSLSocket.setSSLVersionRangeDefault(SSLProtocolVariant.STREAM, new SSLVersionRange(v, v));
        for (int c : SSLSocket.getImplementedCipherSuites()) {
            SSLSocket.setCipherPreferenceDefault(c, false);
        }
        SSLSocket.setCipherPreferenceDefault(SSLCipher.valueOf(suite).getID(), true);
        String bulk = bulkOf(suite);

        StringBuilder sb = new StringBuilder();
        sb.append("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: ").append(size).append("\r\n\r\n");
        for (int i = 0; i < size; i++) {
            sb.append('a');
        }
        byte[] message = sb.toString().getBytes(StandardCharsets.US_ASCII);

        SSLServerSocket.configServerSessionIDCache(0, 43200, 43200, null);
        try (SSLServerSocket server = new SSLServerSocket(port, 1024, InetAddress.getByName("127.0.0.1"))) {
            server.setReuseAddress(true);
            server.requestClientAuth(false);
            server.requireClientAuth(SSLSocket.SSL_REQUIRE_NEVER);
            server.setUseClientMode(false);
            server.setServerCertNickname(nickname);
            System.out.println("BENCH-LISTENING " + port);
            System.out.flush();
            ThreadGroup peers = new ThreadGroup("peers");
            while (true) {
                while (peers.activeCount() > LIMIT) {
                    Thread.sleep(10);
                }
                Socket peer = server.accept();
                new Thread(peers, () -> serve(peer, message, protocol, suite, bulk)).start();
            }
        }
    }

    private static void serve(Socket peer, byte[] message, String protocol, String suite, String bulk) {
        try {
            try {
                SSLSocket s = (SSLSocket) peer;
                s.setUseClientMode(false);
                s.forceHandshake();
                long n = CONNECTIONS.incrementAndGet();
                // after a long warm-up a short cell may hold fewer than 256
                // connections: one every 100 ms is sampled too
                long now = System.nanoTime();
                long last = LAST_SAMPLE.get();
                if (n <= 64 || n % 256 == 0 || (now - last >= 100_000_000L && LAST_SAMPLE.compareAndSet(last, now))) {
                    String got = s.getStatus().getCipher();
                    String name = bulk.equalsIgnoreCase(got) ? suite : "bulk:" + got;
                    System.out.println("NEGOTIATED " + protocol + " " + name);
                }
                InputStream in = peer.getInputStream();
                int avail = in.available();
                if (avail > 0) {
                    in.read(new byte[avail]);
                }
                OutputStream out = peer.getOutputStream();
                out.write(message);
            } finally {
                peer.close();
            }
        } catch (Exception e) {
            System.err.println("connection failed: " + e);
        }
    }

    /** NSS's bulk cipher name for a suite, as SSL_SecurityStatus reports it. */
    private static String bulkOf(String suite) {
        if (suite.contains("AES_128_GCM")) {
            return "AES-128-GCM";
        }
        if (suite.contains("AES_256_GCM")) {
            return "AES-256-GCM";
        }
        if (suite.contains("CHACHA20")) {
            return "CHACHA20POLY1305";
        }
        return "?";
    }
}
