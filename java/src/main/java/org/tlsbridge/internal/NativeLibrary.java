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
 * Finds and loads the libtlsbridge of the chosen OpenSSL flavour, then checks it is the build the Java
 * classes were made with.
 *
 * <p>The jar carries one library per OpenSSL flavour, chosen with
 * {@code -Dtlsbridge.openssl}:
 * <ul>
 * <li>{@code bundled} (default): {@code libtlsbridge-bundled.so}, OpenSSL 3.5
 * linked in, needing nothing but libc;</li>
 * <li>{@code system}: the host's OpenSSL, {@code libtlsbridge-system4.so} when
 * {@code libssl.so.4} loads, else {@code libtlsbridge.so} on
 * {@code libssl.so.3} (OpenSSL 3.0 to 3.5).</li>
 * </ul>
 * When none loads, the error names every library looked for and why it
 * failed; the provider then offers nothing and JCA moves on.
 *
 * <p>Where: {@code -Dtlsbridge.library.path=<file>} (any flavour, as is); the
 * copy inside the jar ({@code META-INF/native/linux-x86_64} or
 * {@code linux-aarch64}, after {@code os.arch}; with a {@code -musl} suffix on
 * a musl C library, see {@link CLibrary}: Alpine's JDKs carry the bundled
 * flavour only), extracted to a fresh owner-only directory under
 * {@code tlsbridge.workdir} (default {@code java.io.tmpdir}, then
 * {@code ~/.cache/tlsbridge} when the first is mounted noexec);
 * {@code java.library.path}. A library whose constants differ from
 * {@link NativeConstants} is refused, whatever its build id.
 */
public final class NativeLibrary {
    private static final Logger LOG = Logger.getLogger("org.tlsbridge");
    private static final CLibrary.Detected LIBC = CLibrary.detect();
    private static final String RESOURCE_DIR = "/META-INF/native/"
            + platform(System.getProperty("os.arch"), LIBC.musl) + "/";
    private static final String BUILD_ID;
    private static final String VERSION;
    private static volatile boolean loaded;
    private static Throwable failure;
    private static String loadedFrom;
    private static String flavour;
    /** How the user wrote the tlsbridge.openssl choice: the name "=value" is added to, and where (or null). */
    private static String choiceName = "-Dtlsbridge.openssl";
    private static String choiceWhere;

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

    /**
     * The jar's directory for this JVM's architecture ({@code os.arch} says
     * "amd64" where the toolchains say x86_64) and C library. Any other
     * architecture gets a directory the jar does not have, so the error names
     * what was looked for.
     */
    static String platform(String osArch, boolean musl) {
        return platform(osArch) + (musl ? "-musl" : "");
    }

    static String platform(String osArch) {
        switch (osArch) {
            case "amd64":
            case "x86_64":
                return "linux-x86_64";
            case "aarch64":
            case "arm64":
                return "linux-aarch64";
            default:
                return "linux-" + osArch;
        }
    }

    public static String javaBuildId() {
        return BUILD_ID;
    }

    public static String version() {
        return VERSION;
    }

    /**
     * The OpenSSL flavour serving (after {@link #ensureLoaded()}): "bundled",
     * "system (libssl.so.4)", "system (libssl.so.3)", or "explicit" for
     * {@code tlsbridge.library.path}.
     */
    public static synchronized String flavour() {
        return flavour;
    }

    /** Where the library was loaded from (after {@link #ensureLoaded()}). */
    public static synchronized String loadedFrom() {
        return loadedFrom;
    }

    /**
     * Names the tlsbridge.openssl choice as the user wrote it, when an integration passes its own setting
     * on as the system property (a Spring Boot property, say): errors then name that, not
     * {@code -Dtlsbridge.openssl}. name is what {@code =value} follows ({@code --tlsbridge.openssl} on a
     * command line), where the file or source it was written in, or null. Only before the library loads.
     */
    public static synchronized void choiceWrittenAs(String name, String where) {
        choiceName = name;
        choiceWhere = where;
    }

    private static String choice(String value) {
        return choiceName + "=" + value + (choiceWhere == null ? "" : " (" + choiceWhere + ")");
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

    /** One library of the jar and the OpenSSL it stands for. */
    private static final class Candidate {
        final String file;
        final String flavour;

        Candidate(String file, String flavour) {
            this.file = file;
            this.flavour = flavour;
        }
    }

    private static Candidate[] candidates(String choice) {
        switch (choice) {
            case "bundled":
                return new Candidate[] {new Candidate("libtlsbridge-bundled.so", "bundled")};
            case "system":
                return new Candidate[] {new Candidate("libtlsbridge-system4.so", "system (libssl.so.4)"),
                    new Candidate("libtlsbridge.so", "system (libssl.so.3)")};
            default:
                throw new IllegalArgumentException(choice(choice) + " is neither \"bundled\" nor \"system\"");
        }
    }

    private static String load() throws IOException {
        String explicit = System.getProperty("tlsbridge.library.path");
        if (explicit != null && !explicit.isEmpty()) {
            Path p = Paths.get(explicit).toAbsolutePath();
            System.load(p.toString());
            flavour = "explicit";
            return p.toString();
        }
        String choice = System.getProperty("tlsbridge.openssl", "bundled").trim();
        StringBuilder tried = new StringBuilder();
        for (Candidate c : candidates(choice)) {
            // A jar without this architecture's directory says so, rather
            // than only that java.library.path lacks the file.
            boolean inJar = NativeLibrary.class.getResource(RESOURCE_DIR + c.file) != null;
            try {
                String from = inJar ? loadFromJar(c.file) : loadFromLibraryPath(c.file);
                flavour = c.flavour;
                return from;
            } catch (UnsatisfiedLinkError e) {
                tried.append(tried.length() == 0 ? "" : "; ").append(c.flavour).append(" [")
                        .append(inJar ? c.file : RESOURCE_DIR + c.file + " not in the jar").append("]: ")
                        .append(e.getMessage());
            }
        }
        throw new IOException("no OpenSSL for " + choice(choice) + " loads here: " + tried
                + " (C library " + (LIBC.musl ? "musl" : "glibc") + ", from the " + LIBC.how + ")"
                + ("bundled".equals(choice) ? "" : " (the bundled OpenSSL needs no system library: "
                        + choiceName + "=bundled)"));
    }

    private static String loadFromLibraryPath(String file) {
        System.loadLibrary(file.substring("lib".length(), file.length() - ".so".length()));
        return "java.library.path";
    }

    private static String loadFromJar(String file) throws IOException {
        String work = System.getProperty("tlsbridge.workdir");
        if (work != null && !work.isEmpty()) {
            return extractAndLoad(Paths.get(work), file);
        }
        try {
            return extractAndLoad(Paths.get(System.getProperty("java.io.tmpdir")), file);
        } catch (UnsatisfiedLinkError e) {
            // Only a noexec /tmp ("failed to map segment from shared object")
            // is cured by another directory; a missing or broken libssl is not.
            if (!String.valueOf(e.getMessage()).contains("failed to map segment")) {
                throw e;
            }
            Path fallback = Paths.get(System.getProperty("user.home"), ".cache", "tlsbridge");
            LOG.log(Level.WARNING, "cannot load " + file + " from java.io.tmpdir (" + e.getMessage()
                    + "); trying " + fallback + " (set -Dtlsbridge.workdir to choose)");
            Files.createDirectories(fallback);
            return extractAndLoad(fallback, file);
        }
    }

    private static String extractAndLoad(Path base, String file) throws IOException {
        // A fresh directory that only we can write: nobody can swap the file
        // between writing and loading it.
        Path dir = Files.createTempDirectory(base, "tlsbridge-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path lib = dir.resolve(file);
        try (InputStream in = NativeLibrary.class.getResourceAsStream(RESOURCE_DIR + file)) {
            if (in == null) {
                throw new IOException("resource " + RESOURCE_DIR + file + " vanished");
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
