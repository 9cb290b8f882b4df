package org.tlsbridge.bench.server;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.tomcat.util.net.SSLSupport;
import org.tlsbridge.tomcat.TlsBridgeSupport;

/**
 * GET /N returns N bytes of 'a' (the body JSS's BenchmarkSSLSocket sends);
 * GET /_stats returns the negotiated protocol/suite(/group) counters as JSON.
 * Bodies are built once per size so the servlet costs the same for every
 * provider and the TLS layer is what differs.
 */
final class BytesServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final int MAX = 64 << 20;

    private final transient Negotiated stats;
    private final transient ConcurrentHashMap<Integer, byte[]> bodies = new ConcurrentHashMap<>();

    BytesServlet(Negotiated stats) {
        this.stats = stats;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getRequestURI();
        if (path.startsWith("/_stats")) {
            byte[] b = stats.json().getBytes(StandardCharsets.UTF_8);
            resp.setContentType("application/json");
            resp.setContentLength(b.length);
            resp.getOutputStream().write(b);
            return;
        }
        int n = parseSize(path);
        if (n < 0) {
            resp.sendError(404, "expected /<bytes>");
            return;
        }
        if (stats.shouldCheck()) {
            Object mgr = req.getAttribute(SSLSupport.SESSION_MGR);
            stats.record((String) req.getAttribute(SSLSupport.PROTOCOL_VERSION_KEY),
                    (String) req.getAttribute(SSLSupport.CIPHER_SUITE_KEY),
                    mgr instanceof TlsBridgeSupport ? ((TlsBridgeSupport) mgr).getNamedGroup() : null);
        }
        byte[] body = bodies.computeIfAbsent(n, k -> {
            byte[] a = new byte[k];
            Arrays.fill(a, (byte) 'a');
            return a;
        });
        resp.setContentType("application/octet-stream");
        resp.setContentLength(n);
        OutputStream out = resp.getOutputStream();
        out.write(body);
    }

    private static int parseSize(String path) {
        int n = 0;
        int i = 1;
        if (path.length() < 2 || path.length() > 10) {
            return -1;
        }
        for (; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n <= MAX ? n : -1;
    }
}
