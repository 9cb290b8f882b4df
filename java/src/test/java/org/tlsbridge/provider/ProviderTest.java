package org.tlsbridge.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.KeyManagementException;
import java.security.Provider;
import java.security.Security;
import java.util.ServiceLoader;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.Test;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

class ProviderTest {
    @Test
    void foundThroughServiceLoader() {
        boolean found = false;
        for (Provider p : ServiceLoader.load(Provider.class)) {
            found |= p instanceof TlsBridgeProvider && "TLSBridge".equals(p.getName());
        }
        assertTrue(found, "META-INF/services/java.security.Provider lists TlsBridgeProvider");
    }

    @Test
    void servicesAndVersions() throws Exception {
        Provider p = new TlsBridgeProvider();
        for (String alg : new String[] {"TLS", "TLSv1.2", "TLSv1.3", "Default"}) {
            assertNotNull(p.getService("SSLContext", alg), alg);
            assertEquals(p, SSLContext.getInstance(alg, p).getProvider());
        }
        assertTrue(TlsBridgeProvider.openSslVersion().matches("OpenSSL [34]\\..*"), TlsBridgeProvider.openSslVersion());
        assertTrue(TlsBridgeProvider.isAvailable());
        assertNotNull(TlsBridgeProvider.nativeLibraryPath());
    }

    @Test
    void firstInListServesDefaultLookups() throws Exception {
        Provider p = new TlsBridgeProvider();
        Security.insertProviderAt(p, 1);
        try {
            assertEquals("TLSBridge", SSLContext.getInstance("TLS").getProvider().getName());
            SSLContext def = SSLContext.getInstance("Default");
            assertEquals("TLSBridge", def.getProvider().getName());
            assertThrows(KeyManagementException.class, () -> def.init(null, null, null));
            SSLEngine e = def.createSSLEngine("localhost", 443);
            e.setUseClientMode(true);
            assertTrue(e.getEnabledCipherSuites().length >= 6);
        } finally {
            Security.removeProvider("TLSBridge");
        }
    }

    @Test
    void versionContextsLimitClientProtocols() throws Exception {
        SSLContext v12 = SSLContext.getInstance("TLSv1.2", Contexts.TLSBRIDGE);
        v12.init(null, org.tlsbridge.test.TestPki.get().trustManagers(), null);
        EnginePair p = new EnginePair(v12, Contexts.server(Contexts.TLSBRIDGE, "rsa"), true);
        p.handshake();
        assertEquals("TLSv1.2", p.client.getSession().getProtocol());
        assertEquals(p.client.getSession().getCipherSuite(), p.server.getSession().getCipherSuite());
        assertTrue(p.server.getSession().getId().length > 0 || "TLSv1.3".equals(p.server.getSession().getProtocol()));
    }
}
