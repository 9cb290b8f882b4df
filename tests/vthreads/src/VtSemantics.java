import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.Provider;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * Timeouts and close from another thread on tlsbridge's native sockets, each
 * case run on a platform thread and on a virtual thread: the outcome
 * (exception class and message, or the bytes read) must be the same and the
 * time taken within the case's bounds. Prints PASS/FAIL per case and kind.
 *
 *   java VtSemantics server.p12 pass
 */
public final class VtSemantics {
    static SSLContext server;
    static SSLContext client;
    static int pass;
    static int fail;

    public static void main(String[] args) throws Exception {
        Provider p = VtCommon.tlsbridge();
        server = SSLContext.getInstance("TLS", p);
        server.init(VtCommon.keyManagers(args[0], args[1]), null, null);
        client = VtCommon.trustingClient(p);

        Map<String, Callable<String>> cases = new LinkedHashMap<>();
        cases.put("accept times out", VtSemantics::acceptTimeout);
        cases.put("accept closed by another thread", VtSemantics::acceptClosed);
        cases.put("handshake times out", VtSemantics::handshakeTimeout);
        cases.put("handshake closed by another thread", VtSemantics::handshakeClosed);
        cases.put("read times out, socket stays usable", VtSemantics::readTimeout);
        cases.put("read closed by another thread", VtSemantics::readClosed);
        cases.put("accepted on a platform thread, read times out here", VtSemantics::serverReadTimeout);
        cases.put("write to a peer that does not read, closed by another thread", VtSemantics::writeClosed);
        cases.put("connect refused", VtSemantics::connectRefused);
        cases.put("close with SO_LINGER", VtSemantics::lingerClose);
        cases.put("64 KiB each way, then EOF", VtSemantics::echo);
        for (Map.Entry<String, Callable<String>> c : cases.entrySet()) {
            String onPlatform = run(c.getValue(), false);
            String onVirtual = run(c.getValue(), true);
            boolean ok = onPlatform.equals(onVirtual) && !onPlatform.startsWith("BAD");
            String line = c.getKey() + " -> platform: " + onPlatform + (ok ? "" : " | virtual: " + onVirtual);
            if (ok) {
                pass++;
                System.out.println("PASS " + line);
            } else {
                fail++;
                System.out.println("FAIL " + line);
            }
        }
        System.out.println("SEMANTICS " + pass + " passed, " + fail + " failed");
        System.exit(0);
    }

    static String run(Callable<String> c, boolean virtual) throws Exception {
        CompletableFuture<String> f = new CompletableFuture<>();
        Runnable r = () -> {
            try {
                f.complete(c.call());
            } catch (Throwable t) {
                f.complete("BAD " + t);
            }
        };
        Thread t = virtual ? Thread.ofVirtual().start(r) : Thread.ofPlatform().start(r);
        try {
            return f.get(20, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            t.interrupt();
            return "BAD hung for 20 s";
        }
    }

    /** What a call threw ("Class: message"), and whether it took between min and max ms. */
    static String outcome(Callable<?> c, long minMs, long maxMs) {
        long t0 = System.nanoTime();
        String what;
        try {
            Object v = c.call();
            what = "returned " + v;
        } catch (Exception e) {
            what = e.getClass().getName() + ": " + e.getMessage();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        if (ms < minMs || ms > maxMs) {
            return "BAD " + what + " after " + ms + " ms, not within [" + minMs + ", " + maxMs + "]";
        }
        return what;
    }

    static void closeLater(AutoCloseable s, long ms) {
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(ms);
                s.close();
            } catch (Exception e) {
                // the test's outcome says what went wrong
            }
        });
    }

    static SSLServerSocket listener() throws Exception {
        return (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    /** A tlsbridge server connection, accepted and handshaken on a platform thread. */
    static final class Peer implements AutoCloseable {
        final SSLServerSocket l;
        final CompletableFuture<SSLSocket> accepted = new CompletableFuture<>();

        Peer() throws Exception {
            l = listener();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    SSLSocket s = (SSLSocket) l.accept();
                    s.startHandshake();
                    accepted.complete(s);
                } catch (Exception e) {
                    accepted.completeExceptionally(e);
                }
            });
        }

        SSLSocket connect() throws Exception {
            SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", l.getLocalPort());
            s.startHandshake();
            return s;
        }

        SSLSocket served() throws Exception {
            return accepted.get(10, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws Exception {
            l.close();
            if (accepted.isDone() && !accepted.isCompletedExceptionally()) {
                accepted.get().close();
            }
        }
    }

    static String acceptTimeout() throws Exception {
        try (ServerSocket l = listener()) {
            l.setSoTimeout(300);
            return outcome(l::accept, 250, 3000);
        }
    }

    static String acceptClosed() throws Exception {
        try (ServerSocket l = listener()) {
            closeLater(l, 300);
            return outcome(l::accept, 250, 3000);
        }
    }

    static String handshakeTimeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", silent.getLocalPort())) {
            s.setSoTimeout(300);
            return outcome(() -> {
                s.startHandshake();
                return null;
            }, 250, 3000);
        }
    }

    static String handshakeClosed() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", silent.getLocalPort())) {
            closeLater(s, 300);
            return outcome(() -> {
                s.startHandshake();
                return null;
            }, 250, 3000);
        }
    }

    static String readTimeout() throws Exception {
        try (Peer peer = new Peer(); SSLSocket s = peer.connect()) {
            s.setSoTimeout(300);
            String first = outcome(() -> s.getInputStream().read(), 250, 3000);
            OutputStream o = peer.served().getOutputStream();
            o.write('x');
            o.flush();
            String second = outcome(() -> s.getInputStream().read(), 0, 3000);
            return first + "; then " + second;
        }
    }

    static String readClosed() throws Exception {
        try (Peer peer = new Peer(); SSLSocket s = peer.connect()) {
            closeLater(s, 300);
            return outcome(() -> s.getInputStream().read(), 250, 3000);
        }
    }

    static String serverReadTimeout() throws Exception {
        try (Peer peer = new Peer(); SSLSocket c = peer.connect()) {
            SSLSocket s = peer.served();
            s.setSoTimeout(300);
            String first = outcome(() -> s.getInputStream().read(), 250, 3000);
            c.getOutputStream().write('y');
            c.getOutputStream().flush();
            return first + "; then " + outcome(() -> s.getInputStream().read(), 0, 3000);
        }
    }

    static String writeClosed() throws Exception {
        try (Peer peer = new Peer(); SSLSocket s = peer.connect()) {
            closeLater(s, 500);
            byte[] chunk = new byte[64 * 1024];
            return outcome(() -> {
                OutputStream o = s.getOutputStream();
                for (int i = 0; i < 16 * 1024; i++) { // 1 GiB: far more than the buffers hold
                    o.write(chunk);
                }
                return "wrote everything";
            }, 400, 5000);
        }
    }

    static String connectRefused() throws Exception {
        int port;
        try (ServerSocket gone = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = gone.getLocalPort();
        }
        return outcome(() -> {
            Socket s = client.getSocketFactory().createSocket();
            try {
                s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            } finally {
                s.close();
            }
            return null;
        }, 0, 3000);
    }

    static String lingerClose() throws Exception {
        try (Peer peer = new Peer()) {
            SSLSocket s = peer.connect();
            s.setSoLinger(true, 5);
            // read the server's first byte, and the session tickets before it: bytes left
            // unread when the socket closes would make the kernel reset the connection
            peer.served().getOutputStream().write('z');
            s.getInputStream().read();
            s.getOutputStream().write(new byte[1000]);
            InputStream in = peer.served().getInputStream();
            CompletableFuture<String> got = CompletableFuture.supplyAsync(() -> {
                try {
                    return in.readAllBytes().length + " bytes";
                } catch (Exception e) {
                    return e.toString();
                }
            });
            String closed = outcome(() -> {
                s.close();
                return s.isClosed();
            }, 0, 3000);
            return closed + "; peer read " + got.get(5, TimeUnit.SECONDS);
        }
    }

    static String echo() throws Exception {
        try (Peer peer = new Peer(); SSLSocket s = peer.connect()) {
            SSLSocket srv = peer.served();
            byte[] data = new byte[64 * 1024];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) i;
            }
            CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> {
                try {
                    byte[] b = srv.getInputStream().readNBytes(data.length);
                    srv.getOutputStream().write(b);
                    srv.close();
                    return b;
                } catch (Exception e) {
                    return null;
                }
            });
            s.getOutputStream().write(data);
            byte[] r = s.getInputStream().readAllBytes();
            back.get(10, TimeUnit.SECONDS);
            return java.util.Arrays.equals(r, data) ? "64 KiB back, then EOF" : "BAD echo differs (" + r.length + " bytes)";
        }
    }
}
