package org.tlsbridge.tomcat;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.util.HexFormat;

/** What the tests ask Tomcat for: TLS attributes, an upload digest, a large download. */
final class TestServlets {
    private TestServlets() {
    }

    /** The request attributes servlets see, one "key=value" a line. */
    static final class Info extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            PrintWriter w = resp.getWriter();
            w.println("protocol=" + req.getProtocol());
            w.println("cipher_suite=" + req.getAttribute("jakarta.servlet.request.cipher_suite"));
            w.println("key_size=" + req.getAttribute("jakarta.servlet.request.key_size"));
            w.println("ssl_session_id=" + req.getAttribute("jakarta.servlet.request.ssl_session_id"));
            w.println("tls_protocol=" + req.getAttribute("org.apache.tomcat.util.net.secure_protocol_version"));
            Object mgr = req.getAttribute("jakarta.servlet.request.ssl_session_mgr");
            w.println("named_group=" + (mgr instanceof TlsBridgeSupport ? ((TlsBridgeSupport) mgr).getNamedGroup() : "-"));
            Object certs = req.getAttribute("jakarta.servlet.request.X509Certificate");
            String peer = "none";
            if (certs instanceof X509Certificate[] && ((X509Certificate[]) certs).length > 0) {
                peer = ((X509Certificate[]) certs)[0].getSubjectX500Principal().getName();
            }
            w.println("peer=" + peer);
            w.println("server=" + req.getServerName());
        }
    }

    /** SHA-256 and length of the request body. */
    static final class Upload extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            MessageDigest md = sha256();
            long n = 0;
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = req.getInputStream()) {
                int r;
                while ((r = in.read(buf)) > 0) {
                    md.update(buf, 0, r);
                    n += r;
                }
            }
            resp.setContentType("text/plain");
            resp.getWriter().println("sha256=" + HexFormat.of().formatHex(md.digest()) + " bytes=" + n);
        }
    }

    /** One file, whole. */
    static final class Download extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final Path file;

        Download(Path file) {
            this.file = file;
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("application/octet-stream");
            resp.setContentLengthLong(Files.size(file));
            try (OutputStream out = resp.getOutputStream()) {
                Files.copy(file, out);
            }
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
