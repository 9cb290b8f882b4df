package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.Security;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLEngine;
import org.apache.catalina.connector.Connector;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate.Type;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.engine.TlsBridgeEngine;
import org.tlsbridge.test.Processes;

/**
 * Drop-in mode: no sslImplementationName, Tomcat's own JSSEImplementation,
 * and TLSBridge first in the JCA provider list. Tomcat asks JCA for
 * "TLS" and gets tlsbridge.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TomcatDropInTest {
    private TomcatPki pki;
    @AutoClose
    private EmbeddedTomcat tc;
    private Connector connector;
    private int port;

    @BeforeAll
    void start() throws Exception {
        pki = TomcatPki.get();
        assertNull(Security.getProvider(TlsBridgeProvider.NAME), "another test left TLSBridge installed");
        Security.insertProviderAt(new TlsBridgeProvider(), 1);
        tc = new EmbeddedTomcat(null);
        SSLHostConfig h = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.keystore(h, Type.RSA, pki.path("rsa.p12"), "PKCS12");
        // As docs/tomcat.md advises: Tomcat's default "all" names TLSv1/1.1, which JSSEUtil
        // warns about when the first provider does not list them.
        h.setProtocols("TLSv1.2+TLSv1.3");
        connector = tc.https(null, h);
        tc.start();
        port = connector.getLocalPort();
    }

    @AfterAll
    void removeProvider() {
        Security.removeProvider(TlsBridgeProvider.NAME);
    }

    @Test
    void tomcatsJsseImplementationGetsTlsbridgeEngines() {
        assertNull(connector.getProperty("sslImplementationName"), "drop-in mode must leave Tomcat's default implementation");
        SSLHostConfig h = connector.findSslHostConfigs()[0];
        SSLEngine e = h.getCertificates().iterator().next().getSslContext().createSSLEngine();
        try {
            assertInstanceOf(TlsBridgeEngine.class, e);
        } finally {
            e.closeOutbound();
        }
    }

    @Test
    void servesTls12And13() throws Exception {
        for (String[] v : new String[][] {{"1.2", "ECDHE-RSA-AES256-GCM-SHA384"}, {"1.3", "TLS_AES_256_GCM_SHA384"}}) {
            Processes.Run r = Clients.curl(pki, "localhost", port, "/info", "--http1.1", "--tlsv" + v[0], "--tls-max",
                    v[0]);
            assertEquals(0, r.exit, r.toString());
            assertTrue(r.out.contains("SSL connection using TLSv" + v[0] + " / " + v[1]), r.toString());
            Matcher m = Pattern.compile("(?m)^tls_protocol=(.*)$").matcher(r.out);
            assertTrue(m.find(), r.out);
            assertEquals("TLSv" + v[0], m.group(1).trim());
        }
    }

    @Test
    void noEngineErrorsLogged() {
        List<String> problems = tc.problems();
        assertTrue(problems.isEmpty(), "Tomcat logged: " + String.join("\n", problems));
    }
}
