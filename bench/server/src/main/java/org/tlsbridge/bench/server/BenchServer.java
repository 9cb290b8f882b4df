package org.tlsbridge.bench.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Provider;
import java.security.Security;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;

/**
 * Embedded Tomcat NIO for the benchmark. One connector on 127.0.0.1, one
 * servlet; the TLS implementation is chosen by name so every variant runs the
 * same server code.
 *
 * <pre>
 * BenchServer --impl jsse|tlsbridge|tlsbridge-jsse|openssl-ffm|conscrypt|jsse-accp|wildfly-openssl|plain
 *             [--port 0] [--cert PEM --key PEM] [--protocols TLSv1.3]
 *             [--ciphers SUITES] [--direct true|false] [--groups X25519MLKEM768,...]
 * </pre>
 *
 * Prints {@code BENCH-LISTENING <port>} once the connector is up, or
 * {@code BENCH-UNAVAILABLE <reason>} and exits 3 when the implementation is
 * not in this build, so the runner can report it instead of failing.
 */
public final class BenchServer {
    static final String JSSE = "org.apache.tomcat.util.net.jsse.JSSEImplementation";
    static final String TLSBRIDGE = "org.tlsbridge.tomcat.TlsBridgeImplementation";
    static final String OPENSSL_FFM = "org.apache.tomcat.util.net.openssl.panama.OpenSSLImplementation";

    private BenchServer() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = parse(args);
        String impl = o.getOrDefault("impl", "jsse");
        Logger.getLogger("").setLevel(Level.WARNING);
        Logger.getLogger("org.apache").setLevel(Level.WARNING);

        String implClass = implClass(impl);
        if (implClass != null) {
            try {
                Class.forName(implClass);
            } catch (ClassNotFoundException | LinkageError e) {
                unavailable(impl + ": " + implClass + " is not in this build (" + e + ")");
            }
        }
        if (impl.equals("tlsbridge-jsse")) {
            // Tomcat's JSSEImplementation asks for SSLContext "TLS" with no
            // provider, so the first provider serves it.
            Provider p = (Provider) Class.forName("org.tlsbridge.TlsBridgeProvider").getConstructor().newInstance();
            Security.insertProviderAt(p, 1);
        }
        String peer = null;
        try {
            if (impl.equals("conscrypt")) {
                peer = PeerProviders.conscrypt();
            } else if (impl.equals("jsse-accp")) {
                peer = PeerProviders.accp();
            } else if (impl.equals("wildfly-openssl")) {
                // its OpenSSL version line (INFO) goes to the server's log
                Logger.getLogger("org.wildfly.openssl").setLevel(Level.INFO);
                peer = PeerProviders.wildflyOpenssl();
            }
        } catch (Exception | LinkageError e) {
            System.out.println("BENCH-FAILED " + impl + ": " + e);
            System.out.flush();
            System.exit(2);
        }

        Path base = Files.createTempDirectory("tb-bench-tomcat");
        base.toFile().deleteOnExit();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        if (impl.equals("openssl-ffm")) {
            tomcat.getServer().addLifecycleListener(new org.apache.catalina.core.OpenSSLLifecycleListener());
        }

        Connector c = new Connector("org.apache.coyote.http11.Http11NioProtocol");
        c.setPort(Integer.parseInt(o.getOrDefault("port", "0")));
        c.setProperty("address", "127.0.0.1");
        // Keep-alive runs must never be cut by Tomcat's default of 100
        // requests per connection (nginx is configured the same way).
        c.setProperty("maxKeepAliveRequests", "-1");
        c.setProperty("keepAliveTimeout", "60000");
        c.setProperty("maxConnections", "20000");
        c.setProperty("acceptCount", "1024");
        if (implClass != null) {
            c.setSecure(true);
            c.setScheme("https");
            c.setProperty("SSLEnabled", "true");
            c.setProperty("sslImplementationName", implClass);
            c.setProperty("socket.directSslBuffer", o.getOrDefault("direct", "false"));
            SSLHostConfig h = new SSLHostConfig();
            h.setHostName("_default_");
            if (o.containsKey("protocols")) {
                h.setProtocols(o.get("protocols"));
            }
            if (o.containsKey("ciphers")) {
                h.setCiphers(o.get("ciphers"));
            }
            if (o.containsKey("groups")) {
                h.setGroups(o.get("groups"));
            }
            SSLHostConfigCertificate cert = new SSLHostConfigCertificate(h, SSLHostConfigCertificate.Type.UNDEFINED);
            cert.setCertificateFile(require(o, "cert"));
            cert.setCertificateKeyFile(require(o, "key"));
            h.addCertificate(cert);
            c.addSslHostConfig(h);
        }
        tomcat.getService().addConnector(c);
        tomcat.setConnector(c);

        Negotiated stats = new Negotiated();
        if (peer != null) {
            stats.peerProvider(peer);
            System.out.println("BENCH-PROVIDER " + peer);
        }
        Context ctx = tomcat.addContext("", null);
        Tomcat.addServlet(ctx, "bytes", new BytesServlet(stats));
        ctx.addServletMappingDecoded("/", "bytes");

        tomcat.start();
        if (c.getState() != LifecycleState.STARTED || c.getLocalPort() <= 0) {
            System.out.println("BENCH-FAILED connector did not start (state " + c.getState() + ")");
            System.out.flush();
            tomcat.stop();
            System.exit(2);
        }
        System.out.println("BENCH-INFO impl=" + impl + " class=" + (implClass == null ? "-" : implClass)
                + " java=" + System.getProperty("java.vm.version") + " tomcat="
                + org.apache.catalina.util.ServerInfo.getServerNumber());
        if (impl.startsWith("tlsbridge")) {
            // which OpenSSL really serves (-Dtlsbridge.openssl picks the
            // flavour; the library's file name says which one loaded)
            stats.tlsLibrary(org.tlsbridge.TlsBridgeProvider.openSslVersion(),
                    org.tlsbridge.TlsBridgeProvider.nativeLibraryPath());
            System.out.println("BENCH-TLSLIB " + stats.tlsLibrary());
        }
        System.out.println("BENCH-LISTENING " + c.getLocalPort());
        System.out.flush();
        tomcat.getServer().await();
    }

    private static String implClass(String impl) {
        switch (impl) {
            case "plain":
                return null;
            case "jsse":
            case "tlsbridge-jsse":
            case "conscrypt":
            case "jsse-accp":
            case "wildfly-openssl":
                return JSSE;
            case "tlsbridge":
                return TLSBRIDGE;
            case "openssl-ffm":
                if (Runtime.version().feature() < 22) {
                    unavailable("openssl-ffm: Tomcat's FFM OpenSSL engine needs Java 22+, this is "
                            + Runtime.version());
                }
                return OPENSSL_FFM;
            default:
                throw new IllegalArgumentException("unknown --impl " + impl);
        }
    }

    private static void unavailable(String why) {
        System.out.println("BENCH-UNAVAILABLE " + why);
        System.out.flush();
        System.exit(3);
    }

    static String require(Map<String, String> o, String k) {
        String v = o.get(k);
        if (v == null) {
            throw new IllegalArgumentException("--" + k + " is required for TLS");
        }
        return v;
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }
}
