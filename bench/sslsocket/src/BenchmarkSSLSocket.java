import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Provider;
import java.security.Security;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;

/**
 * A server-side SSLSocket benchmark with the command line of JSS's
 * BenchmarkSSLSocket, for load generators such as siege:
 *
 * <pre>BenchmarkSSLSocket [--bind ADDR] [--virtual] &lt;impl&gt; &lt;p12path&gt; [p12pass] &lt;port&gt; &lt;size&gt;</pre>
 *
 * impl is TLSBridge.SSLSocket, SunJSSE.SSLSocket or any installed provider
 * as &lt;Provider&gt;.SSLSocket. One thread per accepted connection, as JSS
 * does; unlike JSS it reads each HTTP request properly (head up to the blank
 * line, then Content-Length bytes of body) and keeps the connection open
 * when the client asked for keep-alive; otherwise one response and close.
 * With --virtual (Java 21+) each connection gets a virtual thread instead of
 * a platform thread; the accept loop stays on the main thread.
 * The reply is HTTP/1.1 200 OK with a body of size bytes of 'a'.
 *
 * Port 0 picks a free port; the first line on stdout is "LISTENING addr port".
 * For a sample of connections it prints "NEGOTIATED protocol suite" as the
 * server saw them: the first connection, every Nth (system property
 * benchmark.negotiatedEvery, default 1000) and the first one after a pause of
 * benchmark.negotiatedGapMs (default 1000) without a sample, so every load
 * run that starts after an idle second is proven server-side. The sample
 * costs one clock read per connection; the session is queried only for the
 * sampled ones.
 * Lines on stdin: "stats" prints "STATS fds=.. threads=.. connections=..
 * served=.. errors=.." (descriptors from /proc/self/fd); "quit" exits.
 */
public final class BenchmarkSSLSocket {
    private static final int MAX_HEAD = 64 * 1024;
    private static final AtomicInteger LIVE = new AtomicInteger();
    private static final AtomicLong SERVED = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final AtomicInteger IDS = new AtomicInteger();
    private static final long SAMPLE_EVERY = Math.max(1, Long.getLong("benchmark.negotiatedEvery", 1000));
    private static final long SAMPLE_GAP_NS = Long.getLong("benchmark.negotiatedGapMs", 1000) * 1_000_000L;
    private static final AtomicLong LAST_SAMPLE = new AtomicLong(System.nanoTime() - SAMPLE_GAP_NS);

    private final byte[] closeReply;
    private final byte[] keepReply;
    private final byte[] closeHead;
    private final byte[] keepHead;

    private BenchmarkSSLSocket(int size) {
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'a');
        closeHead = head(size, "close");
        keepHead = head(size, "keep-alive");
        closeReply = concat(closeHead, body);
        keepReply = concat(keepHead, body);
    }

    private static byte[] head(int size, String connection) {
        return ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + size + "\r\nConnection: "
                + connection + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    static Provider provider(String impl) throws Exception {
        if (!impl.endsWith(".SSLSocket")) {
            throw new IllegalArgumentException("impl must be <Provider>.SSLSocket, e.g. TLSBridge.SSLSocket");
        }
        String name = impl.substring(0, impl.length() - ".SSLSocket".length());
        Provider p = Security.getProvider(name);
        if (p == null && name.equals("TLSBridge")) {
            p = (Provider) Class.forName("org.tlsbridge.TlsBridgeProvider").getDeclaredConstructor().newInstance();
        }
        if (p == null) {
            throw new IllegalArgumentException("no installed provider named " + name);
        }
        return p;
    }

    static SSLContext context(Provider p, String p12, char[] pass) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(p12)) {
            ks.load(in, pass);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pass);
        SSLContext ctx = SSLContext.getInstance("TLS", p);
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    /** The request head, or null at end of stream before any byte. Keeps extra bytes in buf. */
    private static final class Reader {
        private final InputStream in;
        private byte[] buf = new byte[8192];
        private int start;
        private int end;

        Reader(InputStream in) {
            this.in = in;
        }

        /**
         * Reads until buf[start, returned index) is a whole request head (the
         * blank line excluded); -1 at end of stream before any byte. The
         * caller parses it in place, then calls {@link #consumeHead}.
         */
        int head() throws IOException {
            for (;;) {
                int blank = find();
                if (blank >= 0) {
                    return blank;
                }
                if (end - start >= MAX_HEAD) {
                    throw new IOException("request head too large");
                }
                if (!fill()) {
                    if (end > start) {
                        throw new IOException("connection closed inside a request head");
                    }
                    return -1;
                }
            }
        }

        void consumeHead(int blank) {
            start = blank + 4;
        }

        private int find() {
            for (int i = start; i + 3 < end; i++) {
                if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
                    return i;
                }
            }
            return -1;
        }

        private boolean fill() throws IOException {
            if (start > 0) {
                System.arraycopy(buf, start, buf, 0, end - start);
                end -= start;
                start = 0;
            }
            if (end == buf.length) {
                buf = Arrays.copyOf(buf, buf.length * 2);
            }
            int n = in.read(buf, end, buf.length - end);
            if (n < 0) {
                return false;
            }
            end += n;
            return true;
        }

        void skip(long n) throws IOException {
            while (n > 0) {
                if (start == end && !fill()) {
                    throw new IOException("connection closed inside a request body");
                }
                int k = (int) Math.min(n, end - start);
                start += k;
                n -= k;
            }
        }
    }

    /**
     * What the server needs of a request head, parsed in place from the
     * reader's bytes: the request line (three fields, HTTP/1.x), Content-Length,
     * Connection, and a refusal of Transfer-Encoding. Bytes, not Strings and
     * regular expressions: the server's own work per request should stay small
     * beside the TLS it is there to measure (nginx parses its heads this way).
     */
    private static final class Request {
        private static final byte[] CONTENT_LENGTH = ascii("content-length");
        private static final byte[] CONNECTION = ascii("connection");
        private static final byte[] TRANSFER_ENCODING = ascii("transfer-encoding");
        private static final byte[] CLOSE = ascii("close");
        private static final byte[] KEEP_ALIVE = ascii("keep-alive");
        private static final byte[] HTTP1 = ascii("HTTP/1.");
        private static final byte[] HTTP11 = ascii("HTTP/1.1");
        private static final byte[] HEAD = ascii("HEAD");

        long length;
        boolean http11;
        boolean headOnly;
        boolean connectionClose;
        boolean connectionKeepAlive;

        private static byte[] ascii(String s) {
            return s.getBytes(StandardCharsets.US_ASCII);
        }

        void parse(byte[] b, int from, int to) throws IOException {
            length = 0;
            connectionClose = false;
            connectionKeepAlive = false;
            int eol = lineEnd(b, from, to);
            requestLine(b, from, eol);
            for (int i = eol + 2; i < to; i = eol + 2) {
                eol = lineEnd(b, i, to);
                header(b, i, eol);
            }
        }

        private static int lineEnd(byte[] b, int from, int to) {
            for (int i = from; i + 1 < to; i++) {
                if (b[i] == '\r' && b[i + 1] == '\n') {
                    return i;
                }
            }
            return to;
        }

        private void requestLine(byte[] b, int from, int to) throws IOException {
            int sp1 = indexOf(b, from, to, (byte) ' ');
            int sp2 = sp1 < 0 ? -1 : indexOf(b, sp1 + 1, to, (byte) ' ');
            if (sp1 <= from || sp2 <= sp1 + 1 || sp2 + 1 >= to || indexOf(b, sp2 + 1, to, (byte) ' ') >= 0
                    || !startsWith(b, sp2 + 1, to, HTTP1)) {
                throw new IOException("bad request line: "
                        + new String(b, from, to - from, StandardCharsets.ISO_8859_1));
            }
            http11 = Arrays.equals(b, sp2 + 1, to, HTTP11, 0, HTTP11.length);
            headOnly = Arrays.equals(b, from, sp1, HEAD, 0, HEAD.length);
        }

        private void header(byte[] b, int from, int to) throws IOException {
            int c = indexOf(b, from, to, (byte) ':');
            if (c <= from) {
                return;
            }
            int ns = trimStart(b, from, c);
            int ne = trimEnd(b, ns, c);
            int vs = trimStart(b, c + 1, to);
            int ve = trimEnd(b, vs, to);
            if (equalsIgnoreCase(b, ns, ne, CONTENT_LENGTH)) {
                length = number(b, vs, ve);
            } else if (equalsIgnoreCase(b, ns, ne, CONNECTION)) {
                connectionClose = containsIgnoreCase(b, vs, ve, CLOSE);
                connectionKeepAlive = containsIgnoreCase(b, vs, ve, KEEP_ALIVE);
            } else if (equalsIgnoreCase(b, ns, ne, TRANSFER_ENCODING)) {
                throw new IOException("chunked request bodies are not supported");
            }
        }

        private static long number(byte[] b, int from, int to) throws IOException {
            if (from == to || to - from > 18) {
                throw new IOException("bad Content-Length");
            }
            long n = 0;
            for (int i = from; i < to; i++) {
                int d = b[i] - '0';
                if (d < 0 || d > 9) {
                    throw new IOException("bad Content-Length");
                }
                n = n * 10 + d;
            }
            return n;
        }

        private static int indexOf(byte[] b, int from, int to, byte x) {
            for (int i = from; i < to; i++) {
                if (b[i] == x) {
                    return i;
                }
            }
            return -1;
        }

        private static int trimStart(byte[] b, int from, int to) {
            while (from < to && (b[from] == ' ' || b[from] == '\t')) {
                from++;
            }
            return from;
        }

        private static int trimEnd(byte[] b, int from, int to) {
            while (to > from && (b[to - 1] == ' ' || b[to - 1] == '\t')) {
                to--;
            }
            return to;
        }

        private static boolean startsWith(byte[] b, int from, int to, byte[] p) {
            return to - from >= p.length && Arrays.equals(b, from, from + p.length, p, 0, p.length);
        }

        /** p is lower case ASCII. */
        private static boolean equalsIgnoreCase(byte[] b, int from, int to, byte[] p) {
            return to - from == p.length && regionIgnoreCase(b, from, p);
        }

        private static boolean containsIgnoreCase(byte[] b, int from, int to, byte[] p) {
            for (int i = from; i + p.length <= to; i++) {
                if (regionIgnoreCase(b, i, p)) {
                    return true;
                }
            }
            return false;
        }

        private static boolean regionIgnoreCase(byte[] b, int at, byte[] p) {
            for (int i = 0; i < p.length; i++) {
                int x = b[at + i];
                if (x >= 'A' && x <= 'Z') {
                    x += 'a' - 'A';
                }
                if (x != p[i]) {
                    return false;
                }
            }
            return true;
        }
    }

    private static boolean sampled(long id) {
        if (id == 1 || id % SAMPLE_EVERY == 0) {
            LAST_SAMPLE.set(System.nanoTime());
            return true;
        }
        long now = System.nanoTime();
        long last = LAST_SAMPLE.get();
        return now - last >= SAMPLE_GAP_NS && LAST_SAMPLE.compareAndSet(last, now);
    }

    /** tlsbridge's TlsBridgeProvider.negotiatedGroup when tlsbridge serves (looked up: JSS builds this file without it). */
    private static String namedGroup(SSLSession session) {
        try {
            return (String) Class.forName("org.tlsbridge.TlsBridgeProvider")
                    .getMethod("negotiatedGroup", SSLSession.class).invoke(null, session);
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    private void serve(Socket peer, long id) {
        LIVE.incrementAndGet();
        try (Socket s = peer) {
            ((SSLSocket) s).setUseClientMode(false);
            ((SSLSocket) s).startHandshake();
            if (sampled(id)) {
                SSLSession session = ((SSLSocket) s).getSession();
                String group = namedGroup(session);
                System.out.println("NEGOTIATED " + session.getProtocol() + " " + session.getCipherSuite()
                        + (group == null ? "" : " " + group));
            }
            Reader r = new Reader(s.getInputStream());
            OutputStream out = s.getOutputStream();
            Request q = new Request();
            int blank;
            while ((blank = r.head()) >= 0) {
                q.parse(r.buf, r.start, blank);
                r.consumeHead(blank);
                r.skip(q.length);
                boolean keep = q.http11 ? !q.connectionClose : q.connectionKeepAlive;
                out.write(q.headOnly ? (keep ? keepHead : closeHead) : (keep ? keepReply : closeReply));
                out.flush();
                SERVED.incrementAndGet();
                if (!keep) {
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            ERRORS.incrementAndGet();
            if (Boolean.getBoolean("benchmark.verbose")) {
                e.printStackTrace();
            }
        } finally {
            LIVE.decrementAndGet();
        }
    }

    private static void admin(ServerSocket server) {
        Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("stats")) {
                        long fds;
                        try (var list = Files.list(Path.of("/proc/self/fd"))) {
                            fds = list.count();
                        }
                        System.out.println("STATS fds=" + fds + " threads=" + Thread.activeCount() + " connections="
                                + LIVE.get() + " served=" + SERVED.get() + " errors=" + ERRORS.get());
                    } else if (line.trim().equals("quit")) {
                        server.close();
                        return;
                    }
                }
            } catch (IOException e) {
                // stdin gone: keep serving
            }
        }, "benchmark-admin");
        t.setDaemon(true);
        t.start();
    }

    /** Executors.newVirtualThreadPerTaskExecutor(), looked up: this file compiles for Java 17. */
    static ExecutorService virtualThreadPerTask() {
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException e) {
            System.err.println("--virtual needs Java 21 or later (this is " + Runtime.version() + ")");
            System.exit(1);
            return null;
        }
    }

    public static void main(String[] args) throws Exception {
        String bind = System.getProperty("benchmark.bind", "127.0.0.1");
        if (args.length >= 2 && args[0].equals("--bind")) {
            bind = args[1];
            args = Arrays.copyOfRange(args, 2, args.length);
        }
        ExecutorService virtual = null;
        if (args.length >= 1 && args[0].equals("--virtual")) {
            virtual = virtualThreadPerTask();
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        if (args.length < 4 || args.length > 5) {
            System.err.println("Usage: BenchmarkSSLSocket [--bind ADDR] [--virtual] <impl> <p12path> [p12pass] <port> <size>");
            System.err.println("impl: TLSBridge.SSLSocket, SunJSSE.SSLSocket or <Provider>.SSLSocket");
            System.err.println("p12pass defaults to m1oZilla (as in JSS); port 0 picks a free port");
            System.exit(1);
        }
        int k = args.length == 5 ? 1 : 0;
        char[] pass = (k == 1 ? args[2] : "m1oZilla").toCharArray();
        int port = Integer.parseInt(args[2 + k]);
        int size = Integer.parseInt(args[3 + k]);
        SSLContext ctx = context(provider(args[0]), args[1], pass);
        BenchmarkSSLSocket b = new BenchmarkSSLSocket(size);
        SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(port, 1024,
                InetAddress.getByName(bind));
        server.setReuseAddress(true);
        server.setUseClientMode(false);
        System.out.println("LISTENING " + bind + " " + server.getLocalPort() + " " + server.getClass().getName()
                + (virtual != null ? " virtual-threads" : ""));
        System.out.flush();
        admin(server);
        try (server) {
            for (;;) {
                Socket peer;
                try {
                    peer = server.accept();
                } catch (SocketException e) {
                    if (server.isClosed()) {
                        break;
                    }
                    throw e;
                }
                int id = IDS.incrementAndGet();
                if (virtual != null) {
                    virtual.execute(() -> b.serve(peer, id));
                    continue;
                }
                Thread t = new Thread(() -> b.serve(peer, id), "conn-" + id);
                t.start();
            }
        }
    }
}
