import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * Clients for VtServer (SunJSSE, this JVM's own, so the server under test is
 * the only tlsbridge here): idleTcp clients connect and never send a byte
 * (the server waits in its handshake), idleTls clients complete the
 * handshake and never send a request (the server waits in a read), then
 * `active` clients at once each make one request; every wait is bounded.
 * Prints IDLE and ACTIVE lines (ok count, latencies min/median/max in ms).
 * The idle handshakes get three times the deadline, the active clients one.
 *
 *   java VtLoad port idleTcp idleTls active deadlineSeconds [wait]
 * (wait: after the IDLE line, wait for a line on stdin before the active clients)
 */
public final class VtLoad {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int idleTcp = Integer.parseInt(args[1]);
        int idleTls = Integer.parseInt(args[2]);
        int active = Integer.parseInt(args[3]);
        long deadlineMs = Long.parseLong(args[4]) * 1000;
        SSLContext ctx = VtCommon.trustingClient(null);
        InetSocketAddress addr = new InetSocketAddress("127.0.0.1", port);
        List<AutoCloseable> keep = new ArrayList<>();
        for (int i = 0; i < idleTcp; i++) {
            keep.add(SocketChannel.open(addr));
        }
        ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor();
        List<Future<SSLSocket>> hs = new ArrayList<>();
        for (int i = 0; i < idleTls; i++) {
            hs.add(ex.submit(() -> {
                SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port);
                s.setSoTimeout((int) (3 * deadlineMs));
                s.startHandshake();
                return s;
            }));
        }
        int idleOk = 0;
        long end = System.currentTimeMillis() + 3 * deadlineMs; // a cold JVM's first handshakes are slow
        for (Future<SSLSocket> f : hs) {
            try {
                keep.add(f.get(Math.max(1, end - System.currentTimeMillis()), TimeUnit.MILLISECONDS));
                idleOk++;
            } catch (Exception e) {
                f.cancel(true);
            }
        }
        System.out.println("IDLE tcp=" + idleTcp + " tls=" + idleOk + "/" + idleTls);
        if (args.length > 5 && args[5].equals("wait")) {
            System.in.read(); // the caller looks at the server while everyone idles
        }
        List<Future<Long>> reqs = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < active; i++) {
            reqs.add(ex.submit(() -> {
                long s0 = System.nanoTime();
                try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
                    s.setSoTimeout((int) deadlineMs);
                    OutputStream out = s.getOutputStream();
                    out.write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    InputStream in = s.getInputStream();
                    String r = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                    if (!r.startsWith("HTTP/1.1 200") || !r.endsWith("ok\n")) {
                        throw new IllegalStateException("bad reply: " + r);
                    }
                }
                return (System.nanoTime() - s0) / 1_000_000;
            }));
        }
        VtCommon.Latencies r = VtCommon.Latencies.await(reqs, System.currentTimeMillis() + deadlineMs);
        long wall = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("ACTIVE ok=" + r.ms().length + "/" + active + " wall_ms=" + wall + r.summary());
        for (AutoCloseable c : keep) {
            try {
                c.close();
            } catch (Exception e) {
                // closing idle clients
            }
        }
        ex.shutdownNow();
        System.exit(0);
    }
}
