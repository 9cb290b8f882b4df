package org.tlsbridge.bench.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.catalina.connector.Connector;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.embedded.tomcat.TomcatConnectorCustomizer;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.boot.web.servlet.context.ServletWebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * The Spring Boot variant of {@link BenchServer}: the same servlet, served by
 * Spring Boot 3.5's embedded Tomcat configured only through properties
 * ({@code server.ssl.*}, {@code server.tomcat.*}), as an application would.
 * With {@code --impl tlsbridge} the tlsbridge jar's auto-configuration does
 * the switch ({@code tlsbridge.required=true}: no silent JSSE fallback); with
 * {@code jsse} it is turned off ({@code tlsbridge.enabled=false}).
 *
 * <pre>
 * SpringBenchServer --impl jsse|tlsbridge|plain [--port 0] [--cert PEM --key PEM]
 *                   [--protocols TLSv1.3] [--ciphers SUITES] [--direct true|false]
 * </pre>
 *
 * Prints {@code BENCH-LISTENING <port>} once Tomcat listens, after a
 * {@code BENCH-INFO} line naming the connector's SSL implementation; prints
 * {@code BENCH-FAILED} and exits 2 if tlsbridge was asked for and is not it.
 */
@SpringBootApplication
public class SpringBenchServer {
    static final String TLSBRIDGE = "org.tlsbridge.tomcat.TlsBridgeImplementation";

    public static void main(String[] args) {
        Map<String, String> o = BenchServer.parse(args);
        String impl = o.getOrDefault("impl", "jsse");
        List<String> props = new ArrayList<>(List.of("--server.address=127.0.0.1",
                "--server.port=" + o.getOrDefault("port", "0"), "--spring.main.banner-mode=off",
                "--logging.level.root=WARN",
                // as BenchServer's connector: keep-alive never cut by a request count
                "--server.tomcat.max-keep-alive-requests=-1", "--server.tomcat.keep-alive-timeout=60s",
                "--server.tomcat.max-connections=20000", "--server.tomcat.accept-count=1024",
                "--tb.direct=" + o.getOrDefault("direct", "false")));
        switch (impl) {
            case "plain":
                break;
            case "jsse":
            case "tlsbridge":
                props.add("--server.ssl.certificate=" + BenchServer.require(o, "cert"));
                props.add("--server.ssl.certificate-private-key=" + BenchServer.require(o, "key"));
                if (o.containsKey("protocols")) {
                    props.add("--server.ssl.enabled-protocols=" + o.get("protocols"));
                }
                if (o.containsKey("ciphers")) {
                    props.add("--server.ssl.ciphers=" + o.get("ciphers"));
                }
                props.add(impl.equals("tlsbridge") ? "--tlsbridge.required=true" : "--tlsbridge.enabled=false");
                break;
            default:
                throw new IllegalArgumentException("unknown --impl " + impl + " (jsse, tlsbridge, plain)");
        }
        System.setProperty("tb.impl", impl);
        SpringApplication.run(SpringBenchServer.class, props.toArray(new String[0]));
    }

    @Bean
    ServletRegistrationBean<BytesServlet> bytes() {
        return new ServletRegistrationBean<>(new BytesServlet(new Negotiated()), "/");
    }

    @Bean
    TomcatConnectorCustomizer directSslBuffer(org.springframework.core.env.Environment env) {
        String direct = env.getProperty("tb.direct", "false");
        return c -> c.setProperty("socket.directSslBuffer", direct);
    }

    @Bean
    ApplicationListener<ServletWebServerInitializedEvent> listening() {
        return e -> {
            Connector c = ((TomcatWebServer) e.getWebServer()).getTomcat().getConnector();
            String impl = System.getProperty("tb.impl");
            Object cls = c.getProperty("sslImplementationName");
            System.out.println("BENCH-INFO impl=" + impl + " class=" + cls + " java="
                    + System.getProperty("java.vm.version") + " tomcat="
                    + org.apache.catalina.util.ServerInfo.getServerNumber() + " spring-boot="
                    + SpringApplication.class.getPackage().getImplementationVersion());
            if (impl.equals("tlsbridge") && !TLSBRIDGE.equals(cls)) {
                System.out.println("BENCH-FAILED the connector's SSL implementation is " + cls + ", not " + TLSBRIDGE);
                System.out.flush();
                System.exit(2);
            }
            System.out.println("BENCH-LISTENING " + e.getWebServer().getPort());
            System.out.flush();
        };
    }
}
