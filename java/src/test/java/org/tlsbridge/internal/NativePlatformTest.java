package org.tlsbridge.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar directory each JVM architecture reads: both of the jar's, under the
 * names JVMs report, and the one of the JVM running this test holds the
 * libraries it loaded (on x86_64 and, in tests/aarch64, on the arm64 JDK);
 * the C library read from an executable's ELF interpreter.
 */
class NativePlatformTest {
    @Test
    void architecturesMapToTheJarsDirectories() {
        assertEquals("linux-x86_64", NativeLibrary.platform("amd64"));
        assertEquals("linux-x86_64", NativeLibrary.platform("x86_64"));
        assertEquals("linux-aarch64", NativeLibrary.platform("aarch64"));
        assertEquals("linux-aarch64", NativeLibrary.platform("arm64"));
        assertEquals("linux-riscv64", NativeLibrary.platform("riscv64"));
        assertEquals("linux-x86_64-musl", NativeLibrary.platform("amd64", true));
        assertEquals("linux-aarch64-musl", NativeLibrary.platform("aarch64", true));
        assertEquals("linux-aarch64", NativeLibrary.platform("aarch64", false));
    }

    /** This JVM (Debian's or Temurin's, glibc; the arm64 one under qemu too) is not taken for musl. */
    @Test
    void thisJvmIsGlibc() throws IOException {
        String interp = CLibrary.interpreter(Paths.get("/proc/self/exe"));
        assertNotNull(interp);
        assertTrue(interp.contains("ld-linux-"), interp);
        CLibrary.Detected d = CLibrary.detect();
        assertFalse(d.musl, d.how);
        assertTrue(d.how.startsWith("interpreter /lib"), d.how);
    }

    /** An ELF header whose PT_INTERP names musl's loader, as an Alpine JDK's java has. */
    @Test
    void muslInterpreterIsRead(@TempDir Path dir) throws IOException {
        byte[] interp = "/lib/ld-musl-x86_64.so.1\0".getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer b = ByteBuffer.allocate(64 + 2 * 56 + interp.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 0x464c457f).put(4, (byte) 2).put(5, (byte) 1);
        b.putLong(0x20, 64).putShort(0x36, (short) 56).putShort(0x38, (short) 2);
        b.putInt(64, 6); // PT_PHDR first
        b.putInt(64 + 56, 3).putLong(64 + 56 + 8, 64 + 2 * 56).putLong(64 + 56 + 32, interp.length);
        b.position(64 + 2 * 56);
        b.put(interp);
        Path f = dir.resolve("java");
        Files.write(f, b.array());
        assertEquals("/lib/ld-musl-x86_64.so.1", CLibrary.interpreter(f));
        b.putInt(64 + 56, 1); // PT_LOAD: no interpreter, a static program
        Files.write(f, b.array());
        assertNull(CLibrary.interpreter(f));
        Files.write(f, "#!/bin/sh\n".getBytes(StandardCharsets.US_ASCII));
        assertThrows(IOException.class, () -> CLibrary.interpreter(f));
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
