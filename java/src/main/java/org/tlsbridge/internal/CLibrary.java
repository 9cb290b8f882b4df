package org.tlsbridge.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Which C library this JVM runs on, glibc or musl (Alpine), so that the
 * loader picks the jar's matching directory: a glibc library cannot load on
 * musl, nor the reverse. Read from the program interpreter the running JVM's
 * executable names ({@code /proc/self/exe}: {@code /lib/ld-musl-x86_64.so.1}
 * on musl, {@code /lib64/ld-linux-x86-64.so.2} on glibc), without running a
 * program; where that cannot be read, from whether a musl dynamic loader is
 * installed and no glibc one.
 */
final class CLibrary {
    private static final int PT_INTERP = 3;

    /** The answer and how it was found, for the loader's error. */
    static final class Detected {
        final boolean musl;
        final String how;

        Detected(boolean musl, String how) {
            this.musl = musl;
            this.how = how;
        }
    }

    private CLibrary() {
    }

    static Detected detect() {
        Path exe = Paths.get("/proc/self/exe");
        try {
            String interp = interpreter(exe);
            if (interp != null) {
                return new Detected(interp.contains("ld-musl-"), "interpreter " + interp + " of " + exe.toRealPath());
            }
        } catch (IOException | RuntimeException e) {
            // Unreadable or not ELF as expected: the loaders on disk decide.
        }
        String musl = firstMatch("/lib", "ld-musl-*.so.1");
        String glibc = firstMatch("/lib64", "ld-linux-*.so.2");
        if (glibc == null) {
            glibc = firstMatch("/lib", "ld-linux-*.so.*");
        }
        if (musl != null && glibc == null) {
            return new Detected(true, "loaders on disk: " + musl + ", no glibc one");
        }
        return new Detected(false, "loaders on disk: " + (glibc != null ? glibc : "no musl one under /lib"));
    }

    /**
     * The PT_INTERP path of a 64-bit little-endian ELF file (x86_64, aarch64),
     * or null when it has none (a static program).
     */
    static String interpreter(Path elf) throws IOException {
        try (FileChannel ch = FileChannel.open(elf, StandardOpenOption.READ)) {
            ByteBuffer h = read(ch, 0, 64);
            if (h.getInt(0) != 0x464c457f || h.get(4) != 2 || h.get(5) != 1) {
                throw new IOException(elf + " is not a 64-bit little-endian ELF file");
            }
            long phoff = h.getLong(0x20);
            int phentsize = Short.toUnsignedInt(h.getShort(0x36));
            int phnum = Short.toUnsignedInt(h.getShort(0x38));
            if (phentsize < 56 || phnum > 256) {
                throw new IOException(elf + ": unexpected program headers");
            }
            ByteBuffer ph = read(ch, phoff, phentsize * phnum);
            for (int i = 0; i < phnum; i++) {
                int at = i * phentsize;
                if (ph.getInt(at) == PT_INTERP) {
                    long off = ph.getLong(at + 8);
                    long size = ph.getLong(at + 32);
                    if (size <= 1 || size > 4096) {
                        throw new IOException(elf + ": unexpected interpreter size " + size);
                    }
                    ByteBuffer s = read(ch, off, (int) size - 1); // without the NUL
                    return StandardCharsets.ISO_8859_1.decode(s).toString();
                }
            }
            return null;
        }
    }

    private static ByteBuffer read(FileChannel ch, long pos, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (ch.read(b, pos + b.position()) < 0) {
                throw new IOException("short ELF file");
            }
        }
        return b.flip();
    }

    private static String firstMatch(String dir, String glob) {
        Path d = Paths.get(dir);
        if (!Files.isDirectory(d)) {
            return null;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d, glob)) {
            for (Path p : ds) {
                return p.toString();
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }
}
