package org.tlsbridge.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Properties;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Finds and loads libtlsbridge.so, then checks it is the build the Java
 * classes were made with.
 *
 * <p>Order: {@code -Dtlsbridge.library.path=<file>}; the copy inside the jar,
 * extracted to a fresh owner-only directory under {@code tlsbridge.workdir}
 * (default {@code java.io.tmpdir}, then {@code ~/.cache/tlsbridge} when the
 * first is mounted noexec); {@code java.library.path}. A library whose
 * constants differ from {@link NativeConstants} is refused, whatever its
 * build id.
 */
public final class NativeLibrary {
    private static final Logger LOG = Logger.getLogger("org.tlsbridge");
    private static final String RESOURCE = "/META-INF/native/linux-x86_64/libtlsbridge.so";
    private static final String BUILD_ID;
    private static final String VERSION;
    private static volatile boolean loaded;
    private static Throwable failure;
    private static String loadedFrom;

    static {
        Properties p = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("/org/tlsbridge/build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BUILD_ID = p.getProperty("build.id", "unknown");
        VERSION = p.getProperty("version", "unknown");
    }

    private NativeLibrary() {
    }

    public static String javaBuildId() {
        return BUILD_ID;
    }

    public static String version() {
        return VERSION;
    }

    /** Where the library was loaded from (after {@link #ensureLoaded()}). */
    public static synchronized String loadedFrom() {
        return loadedFrom;
    }

    /** Loads once; every later call rethrows the first failure. */
    public static void ensureLoaded() {
        if (loaded) {
            return;
        }
        synchronized (NativeLibrary.class) {
            if (loaded) {
                return;
            }
            if (failure != null) {
                throw linkError(failure.getMessage(), failure);
            }
            try {
                loadedFrom = load();
                checkBuild();
                NativeConstants.check(Native.constantNames(), Native.constantValues(), loadedFrom);
                loaded = true;
            } catch (Throwable t) {
                failure = t;
                throw linkError(t.getMessage(), t);
            }
        }
    }

    private static UnsatisfiedLinkError linkError(String msg, Throwable cause) {
        UnsatisfiedLinkError e = new UnsatisfiedLinkError("tlsbridge native library unavailable: " + msg);
        e.initCause(cause);
        return e;
    }

    private static String load() throws IOException {
        String explicit = System.getProperty("tlsbridge.library.path");
        if (explicit != null && !explicit.isEmpty()) {
            Path p = Paths.get(explicit).toAbsolutePath();
            System.load(p.toString());
            return p.toString();
        }
        if (NativeLibrary.class.getResource(RESOURCE) != null) {
            return loadFromJar();
        }
        System.loadLibrary("tlsbridge");
        return "java.library.path";
    }

    private static String loadFromJar() throws IOException {
        String work = System.getProperty("tlsbridge.workdir");
        if (work != null && !work.isEmpty()) {
            return extractAndLoad(Paths.get(work));
        }
        try {
            return extractAndLoad(Paths.get(System.getProperty("java.io.tmpdir")));
        } catch (UnsatisfiedLinkError e) {
            // Typical of a noexec /tmp: "failed to map segment from shared object".
            Path fallback = Paths.get(System.getProperty("user.home"), ".cache", "tlsbridge");
            LOG.log(Level.WARNING, "cannot load libtlsbridge from java.io.tmpdir (" + e.getMessage()
                    + "); trying " + fallback + " (set -Dtlsbridge.workdir to choose)");
            Files.createDirectories(fallback);
            return extractAndLoad(fallback);
        }
    }

    private static String extractAndLoad(Path base) throws IOException {
        // A fresh directory that only we can write: nobody can swap the file
        // between writing and loading it.
        Path dir = Files.createTempDirectory(base, "tlsbridge-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path lib = dir.resolve("libtlsbridge.so");
        try (InputStream in = NativeLibrary.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("resource " + RESOURCE + " vanished");
            }
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
        }
        Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("r-x------"));
        if (Files.isSymbolicLink(lib) || !Files.isRegularFile(lib, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("extracted library is not a regular file: " + lib);
        }
        dir.toFile().deleteOnExit();
        lib.toFile().deleteOnExit();
        try {
            System.load(lib.toString());
        } catch (UnsatisfiedLinkError e) {
            Files.deleteIfExists(lib);
            Files.deleteIfExists(dir);
            throw e;
        }
        return lib.toString();
    }

    private static void checkBuild() {
        String nativeId = Native.buildId();
        if (!BUILD_ID.equals(nativeId) && !Boolean.getBoolean("tlsbridge.skipBuildCheck")) {
            throw new IllegalStateException("libtlsbridge build " + nativeId + " (" + loadedFrom
                    + ") does not match the Java classes' build " + BUILD_ID
                    + "; use the library from the same tlsbridge jar (or -Dtlsbridge.skipBuildCheck=true)");
        }
    }
}
