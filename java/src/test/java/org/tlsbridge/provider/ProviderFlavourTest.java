package org.tlsbridge.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.internal.NativeLibrary;
import org.tlsbridge.internal.NativeObjects;

/**
 * Which OpenSSL serves: scripts/test runs the engine, socket and Tomcat tests
 * once per flavour and says which one it expects, so a row that silently ran
 * on another OpenSSL (a missing libssl.so.4 falling back to .so.3, say) fails.
 * Without the expectation properties, the default: the bundled OpenSSL 3.5.
 */
class ProviderFlavourTest {
    @Test
    void theExpectedOpenSslServes() {
        String version = TlsBridgeProvider.openSslVersion();
        String flavour = NativeLibrary.flavour();
        // -Dtlsbridge.library.path (the sanitizer pass's own build) names the
        // library itself, whatever OpenSSL it links.
        boolean explicit = System.getProperty("tlsbridge.library.path") != null;
        String wantVersion = System.getProperty("tlsbridge.test.expectOpenssl", explicit ? "OpenSSL " : "OpenSSL 3.5.");
        String wantFlavour = System.getProperty("tlsbridge.test.expectFlavour", explicit ? "explicit" : "bundled");
        assertTrue(version.startsWith(wantVersion), version + " (" + flavour + "), expected " + wantVersion);
        assertEquals(wantFlavour, flavour, "flavour, served by " + TlsBridgeProvider.nativeLibraryPath());
    }

    /** The MBean an operator reads when an OpenSSL advisory comes out names the same OpenSSL and file. */
    @Test
    void theMBeanNamesTheOpenSslThatServes() throws Exception {
        NativeObjects.register();
        Object a = ManagementFactory.getPlatformMBeanServer().getAttribute(new ObjectName(NativeObjects.NAME),
                "OpenSsl");
        String s = (String) a;
        assertTrue(s.startsWith(TlsBridgeProvider.openSslVersion() + " (" + NativeLibrary.flavour() + ", "), s);
        assertTrue(s.endsWith(TlsBridgeProvider.nativeLibraryPath() + ")"), s + " vs " + TlsBridgeProvider.nativeLibraryPath());
    }
}
