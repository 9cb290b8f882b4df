package org.tlsbridge.tomcat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.coyote.http2.Http2Protocol;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;

/**
 * An embedded Tomcat on 127.0.0.1 with ephemeral-port NIO connectors, the
 * test servlets, and a capture of everything it logs.
 */
final class EmbeddedTomcat implements AutoCloseable {
    static final String IMPL = TlsBridgeImplementation.class.getName();

    final Tomcat tomcat = new Tomcat();
    final Path base;
    private final List<Connector> connectors = new ArrayList<>();
    final List<LogRecord> log = Collections.synchronizedList(new ArrayList<>());
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            log.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    EmbeddedTomcat(Path download) throws IOException {
        base = Files.createTempDirectory("tlsbridge-tomcat");
        tomcat.setBaseDir(base.toString());
        Logger.getLogger("").addHandler(capture);
        File docBase = Files.createDirectories(base.resolve("root")).toFile();
        Context ctx = tomcat.addContext("", docBase.getAbsolutePath());
        add(ctx, "info", new TestServlets.Info(), "/info");
        add(ctx, "upload", new TestServlets.Upload(), "/upload");
        if (download != null) {
            add(ctx, "download", new TestServlets.Download(download), "/download");
        }
    }

    private static void add(Context ctx, String name, jakarta.servlet.Servlet s, String path) {
        Tomcat.addServlet(ctx, name, s);
        ctx.addServletMappingDecoded(path, name);
    }

    /** An HTTPS NIO connector on 127.0.0.1:0; implementation null keeps Tomcat's default (JSSE). */
    Connector https(String implementation, SSLHostConfig... hosts) {
        return https("org.apache.coyote.http11.Http11NioProtocol", implementation, hosts);
    }

    /** The same with another protocol handler (NIO2's). */
    Connector https(String protocolHandler, String implementation, SSLHostConfig... hosts) {
        Connector c = new Connector(protocolHandler);
        c.setPort(0);
        c.setProperty("address", "127.0.0.1");
        c.setScheme("https");
        c.setSecure(true);
        c.setProperty("SSLEnabled", "true");
        if (implementation != null) {
            c.setProperty("sslImplementationName", implementation);
        }
        for (SSLHostConfig h : hosts) {
            c.addSslHostConfig(h);
        }
        tomcat.getService().addConnector(c);
        connectors.add(c);
        return c;
    }

    static void http2(Connector c) {
        c.addUpgradeProtocol(new Http2Protocol());
    }

    static SSLHostConfig host(String name) {
        SSLHostConfig h = new SSLHostConfig();
        h.setHostName(name);
        return h;
    }

    static SSLHostConfigCertificate keystore(SSLHostConfig h, SSLHostConfigCertificate.Type type, String file,
            String storeType) {
        SSLHostConfigCertificate c = new SSLHostConfigCertificate(h, type);
        c.setCertificateKeystoreFile(file);
        c.setCertificateKeystoreType(storeType);
        c.setCertificateKeystorePassword("changeit");
        h.addCertificate(c);
        return c;
    }

    static SSLHostConfigCertificate pem(SSLHostConfig h, SSLHostConfigCertificate.Type type, String key, String cert,
            String chain, String password) {
        SSLHostConfigCertificate c = new SSLHostConfigCertificate(h, type);
        c.setCertificateKeyFile(key);
        c.setCertificateFile(cert);
        if (chain != null) {
            c.setCertificateChainFile(chain);
        }
        if (password != null) {
            c.setCertificateKeyPassword(password);
        }
        h.addCertificate(c);
        return c;
    }

    void start() throws LifecycleException {
        tomcat.setConnector(connectors.get(0));
        tomcat.start();
        for (Connector c : connectors) {
            if (c.getLocalPort() <= 0) {
                throw new LifecycleException("connector did not start: " + c + " state " + c.getState());
            }
        }
    }

    /** Log records at WARNING or above, formatted with their causes. */
    List<String> problems() {
        List<String> out = new ArrayList<>();
        synchronized (log) {
            for (LogRecord r : log) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    out.add(r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()
                            + (r.getThrown() == null ? "" : " / " + r.getThrown()));
                }
            }
        }
        return out;
    }

    boolean logged(String fragment) {
        synchronized (log) {
            return log.stream().anyMatch(r -> r.getMessage() != null && r.getMessage().contains(fragment));
        }
    }

    @Override
    public void close() throws Exception {
        try {
            tomcat.stop();
            tomcat.destroy();
        } finally {
            Logger.getLogger("").removeHandler(capture);
        }
    }
}
