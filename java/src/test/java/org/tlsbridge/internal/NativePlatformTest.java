package org.tlsbridge.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The jar directory each JVM architecture reads: both of the jar's, under the
 * names JVMs report, and the one of the JVM running this test holds the
 * libraries it loaded (on x86_64 and, in tests/aarch64, on the arm64 JDK).
 */
class NativePlatformTest {
    @Test
    void architecturesMapToTheJarsDirectories() {
        assertEquals("linux-x86_64", NativeLibrary.platform("amd64"));
        assertEquals("linux-x86_64", NativeLibrary.platform("x86_64"));
        assertEquals("linux-aarch64", NativeLibrary.platform("aarch64"));
        assertEquals("linux-aarch64", NativeLibrary.platform("arm64"));
        assertEquals("linux-riscv64", NativeLibrary.platform("riscv64"));
    }

    @Test
    void thisJvmsDirectoryServesTheLoadedLibrary() {
        NativeLibrary.ensureLoaded();
        String dir = "/META-INF/native/" + NativeLibrary.platform(System.getProperty("os.arch")) + "/";
        for (String f : new String[] {"libtlsbridge-bundled.so", "libtlsbridge.so"}) {
            assertNotNull(NativeLibrary.class.getResource(dir + f), dir + f);
        }
        String from = NativeLibrary.loadedFrom();
        assertTrue(from.endsWith(".so") || from.equals("java.library.path"), from);
    }
}
