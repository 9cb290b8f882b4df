package org.tlsbridge.soak;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.tlsbridge.TlsBridgeProvider;

/**
 * tlsbridge's native-descriptor SSLServerSocket (an ECDSA and an RSA one) on
 * 127.0.0.1, and client threads with tlsbridge's native-descriptor
 * SSLSocket: connect, a random number of uploads and downloads of random
 * sizes (each byte checked on arrival), then a close chosen at random.
 *
 * <p>Wire: a 13-byte command (op, seed int, length long). 'U': the client
 * sends length pattern bytes, the server answers one byte 'K' once it has
 * checked them. 'D': the server sends length pattern bytes. 'Q': the server
 * answers 'Q' and both close with close_notify.
 */
final class SocketLoad {
    private final Shared sh;
    private final List<ServerSocket> servers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final ExecutorService handlers;

    SocketLoad(Shared sh, int clients) throws IOException {
        this.sh = sh;
        this.handlers = Executors.newFixedThreadPool(2 * clients + 2, r -> {
            Thread t = new Thread(r, "soak-socket-server");
            t.setDaemon(true);
            return t;
        });
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        for (SSLContext c : List.of(sh.tbServerEc, sh.tbServerRsa)) {
            SSLServerSocket ss = (SSLServerSocket) c.getServerSocketFactory().createServerSocket(0, 128, lo);
            servers.add(ss);
            Thread t = new Thread(() -> acceptLoop(ss), "soak-accept-" + ss.getLocalPort());
            t.setDaemon(true);
            threads.add(t);
        }
        for (int i = 0; i < clients; i++) {
            final long seed = 7000 + i;
            Thread t = new Thread(() -> clientLoop(new SplittableRandom(seed)), "soak-socket-client-" + i);
            threads.add(t);
        }
    }

    void start() {
        threads.forEach(Thread::start);
    }

    void stop() throws InterruptedException {
        for (Thread t : threads) {
            if (!t.isDaemon()) {
                t.join();
            }
        }
        for (ServerSocket s : servers) {
            try {
                s.close();
            } catch (IOException e) {
                sh.error("server socket close", e);
            }
        }
        handlers.shutdown();
    }

    private void acceptLoop(ServerSocket ss) {
        while (!ss.isClosed()) {
            Socket s;
            try {
                s = ss.accept();
            } catch (IOException e) {
                if (ss.isClosed()) {
                    return;
                }
                sh.error("accept", e);
                continue;
            }
            try {
                handlers.execute(() -> serve(s));
            } catch (RejectedExecutionException e) {
                closeQuietly(s);
                sh.liveSocketConns.decrementAndGet();
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(30_000);
            s.setTcpNoDelay(true);
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[64 * 1024];
            while (true) {
                int op;
                try {
                    op = in.read();
                } catch (IOException e) {
                    sh.serverAborts.incrementAndGet(); // client left before or during the handshake
                    return;
                }
                if (op < 0) {
                    return; // client closed without 'Q'
                }
                int seed = in.readInt();
                long len = in.readLong();
                if (op == 'U') {
                    long off = 0;
                    while (off < len) {
                        int n = in.read(buf, 0, (int) Math.min(buf.length, len - off));
                        if (n < 0) {
                            throw new EOFException("upload cut short");
                        }
                        if (!Shared.matches(buf, 0, n, seed, off)) {
                            sh.error("socket upload: bytes differ at offset " + off, null);
                            return;
                        }
                        off += n;
                    }
                    out.write('K');
                    out.flush();
                } else if (op == 'D') {
                    writePattern(out, seed, len);
                } else if (op == 'Q') {
                    out.write('Q');
                    out.flush();
                    return;
                } else {
                    sh.error("socket: unknown op " + op, null);
                    return;
                }
            }
        } catch (IOException e) {
            sh.serverAborts.incrementAndGet(); // the client went away mid-command (on purpose)
        } catch (Throwable t) {
            sh.error("socket server", t);
        } finally {
            sh.liveSocketConns.decrementAndGet();
        }
    }

    private static void writePattern(OutputStream out, long seed, long len) throws IOException {
        long off = 0;
        while (off < len) {
            int n = (int) Math.min(len - off, 256 * 1024);
            out.write(Shared.P, Shared.start(seed, off), n);
            off += n;
        }
        out.flush();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing after a failure: the failure is what counts
        }
    }

    private void clientLoop(SplittableRandom rnd) {
        sh.addWorker();
        try {
            byte[] buf = new byte[64 * 1024];
            while (!sh.done()) {
                if (sh.pauseRequested()) {
                    sh.park();
                    continue;
                }
                oneConnection(rnd, buf);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            sh.removeWorker();
        }
    }

    private void oneConnection(SplittableRandom rnd, byte[] buf) {
        ServerSocket target = servers.get(rnd.nextInt(servers.size()));
        int how = rnd.nextInt(100);
        SSLSocket s;
        try {
            s = (SSLSocket) sh.tbClient.getSocketFactory().createSocket("127.0.0.1", target.getLocalPort());
        } catch (IOException e) {
            sh.error("socket connect", e);
            return;
        }
        sh.liveSocketConns.incrementAndGet(); // the server's handler takes it back
        try (s) {
            s.setSoTimeout(30_000);
            s.setTcpNoDelay(true);
            if (how < 2) {
                sh.abrupt.incrementAndGet(); // closed before the handshake
                return;
            }
            if (rnd.nextInt(5) == 0) {
                s.setEnabledProtocols(new String[] {"TLSv1.2"});
            }
            s.startHandshake();
            sh.handshakes.incrementAndGet();
            sh.socketHandshakes.incrementAndGet();
            if (TlsBridgeProvider.isResumed(s.getSession())) {
                sh.resumed.incrementAndGet();
                sh.socketResumed.incrementAndGet();
            }
            if ("TLSv1.2".equals(s.getSession().getProtocol())) {
                sh.tls12.incrementAndGet();
            }
            // 30% of sessions are not offered again: the next connection is a full handshake
            if (rnd.nextInt(10) < 3) {
                s.getSession().invalidate();
            }
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            int ops = rnd.nextInt(5);
            for (int i = 0; i < ops; i++) {
                long len = sh.nextTransfer(rnd, 8L << 20);
                int seed = rnd.nextInt(Shared.PLEN);
                boolean up = rnd.nextBoolean();
                command(out, up ? 'U' : 'D', seed, len);
                if (up) {
                    if (how < 5 && len > 1) {
                        writePatternPart(out, seed, len / 2);
                        sh.abrupt.incrementAndGet(); // closed mid-upload
                        return;
                    }
                    writePattern(out, seed, len);
                    if (in.read() != 'K') {
                        throw new IOException("no 'K' after an upload");
                    }
                } else {
                    readPattern(in, buf, seed, len);
                }
                sh.bytes.addAndGet(len);
                sh.socketBytes.addAndGet(len);
            }
            if (how < 15) {
                sh.abrupt.incrementAndGet(); // close without 'Q' (close_notify still sent)
                return;
            }
            command(out, 'Q', 0, 0);
            if (in.read() != 'Q') {
                throw new IOException("no 'Q' answer");
            }
            sh.graceful.incrementAndGet();
        } catch (Exception e) {
            sh.error("socket client", e);
        }
    }

    /** One write, so one TLS record and one TCP segment per command. */
    private static void command(OutputStream out, char op, int seed, long len) throws IOException {
        out.write(ByteBuffer.allocate(13).put((byte) op).putInt(seed).putLong(len).array());
        out.flush();
    }

    private static void writePatternPart(OutputStream out, long seed, long len) throws IOException {
        writePattern(out, seed, len);
    }

    private void readPattern(InputStream in, byte[] buf, long seed, long len) throws IOException {
        long off = 0;
        while (off < len) {
            int n = in.read(buf, 0, (int) Math.min(buf.length, len - off));
            if (n < 0) {
                throw new EOFException("download cut short at " + off + " of " + len);
            }
            if (!Shared.matches(buf, 0, n, seed, off)) {
                throw new IOException("socket download: bytes differ at offset " + off);
            }
            off += n;
        }
    }
}
