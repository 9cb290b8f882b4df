package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.features.OpensslPeers;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * Key limits: with jdk.tls.keyLimits set small (a -Djava.security.properties file, as a user would),
 * tlsbridge's engine and native socket, as client and as server, send a KeyUpdate before a TLS 1.3
 * write key protects more than the limit, and the data arrives intact. The KeyUpdates are counted
 * where they arrive: openssl's -msg record of what it received, SunJSSE's debug log. Each key
 * protects exactly the limit, so n bytes take ceil(n / limit) - 1 updates.
 */
@Timeout(300)
class KeyLimitsTest {
    private static final TestPki PKI = TestPki.get();
    private static final int GCM_LIMIT = 1 << 14;
    private static final int CHACHA_LIMIT = 1 << 15;
    private static final int BYTES = 10 * GCM_LIMIT + 100;
    private static final String GCM = "TLS_AES_128_GCM_SHA256";
    private static final String CHACHA = "TLS_CHACHA20_POLY1305_SHA256";

    private static int expected(int limit) {
        return (BYTES + limit - 1) / limit - 1;
    }

    @Test
    void parsesAsSunJsse() {
        assertArrayEquals(new long[] {1L << 37, 1L << 37},
                KeyLimits.parse("AES/GCM/NoPadding KeyUpdate 2^37, ChaCha20-Poly1305 KeyUpdate 2^37"));
        assertArrayEquals(new long[] {16384, 0}, KeyLimits.parse(" aes/gcm/nopadding keyupdate 16384"));
        assertArrayEquals(new long[] {0, 0}, KeyLimits.parse(null));
        // unknown action, bad number, out of range, too few words, other cipher: skipped
        assertArrayEquals(new long[] {0, 1024}, KeyLimits.parse("AES/GCM/NoPadding Drop 2^10, AES/GCM/NoPadding "
                + "KeyUpdate x, AES/GCM/NoPadding KeyUpdate 2^63, AES/GCM/NoPadding, AES/CBC/NoPadding KeyUpdate 10, "
                + "ChaCha20-Poly1305 KeyUpdate 2^10"));
        // a later entry for the same cipher wins, as in SunJSSE's map
        assertArrayEquals(new long[] {2, 0}, KeyLimits.parse("AES/GCM/NoPadding KeyUpdate 1, AES/GCM/NoPadding KeyUpdate 2"));
    }

    private static Path securityFile() throws Exception {
        Path f = Files.createTempFile("keylimits", ".security");
        Files.writeString(f, "jdk.tls.keyLimits=AES/GCM/NoPadding KeyUpdate 2^14, ChaCha20-Poly1305 KeyUpdate "
                + CHACHA_LIMIT + "\n");
        return f;
    }

    /** A JVM running KeyLimitsPeer; output (stdout and stderr) goes to a file. */
    private static Process java(Path out, List<String> jvmArgs, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(KeyLimitsPeer.class.getName());
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    private static void awaitText(Path f, String text, Process p) throws Exception {
        long end = System.currentTimeMillis() + 30_000;
        while (!Files.readString(f, StandardCharsets.ISO_8859_1).contains(text)) {
            assertTrue(p.isAlive(), "exited before \"" + text + "\":\n" + Files.readString(f));
            assertTrue(System.currentTimeMillis() < end, "no \"" + text + "\":\n" + Files.readString(f));
            Thread.sleep(20);
        }
    }

    private static String finish(Process p, Path out) throws Exception {
        boolean done = p.waitFor(60, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        String s = Files.readString(out, StandardCharsets.ISO_8859_1);
        assertTrue(done, "did not finish:\n" + tail(s));
        return s;
    }

    private static String tail(String s) {
        return s.length() > 6000 ? "..." + s.substring(s.length() - 6000) : s;
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** The KeyUpdates openssl received, from its -msg file. */
    private static int opensslReceived(String msg) {
        int n = 0;
        for (String line : msg.split("\n")) {
            if (line.startsWith("<<<") && line.contains("KeyUpdate")) {
                n++;
            }
        }
        return n;
    }

    /**
     * tlsbridge (limits from the file, or the JDK's defaults) sends BYTES to openssl s_server or
     * s_client; returns the KeyUpdates openssl received, after checking the bytes it printed.
     */
    private static int againstOpenssl(String kind, String role, String protocol, String suite, boolean small)
            throws Exception {
        Path dir = Files.createTempDirectory("keylimits");
        Path msg = dir.resolve("msg");
        Path data = dir.resolve("data");
        Path log = dir.resolve("tlsbridge");
        int port = Processes.freePort();
        List<String> jvm = small ? List.of("-Djava.security.properties=" + securityFile()) : List.of();
        String[] tb = {"TLSBridge", kind, role, Integer.toString(port), Integer.toString(BYTES), protocol, suite};
        List<String> ossl = new ArrayList<>(List.of(OpensslPeers.openssl35()));
        Process server;
        Process client;
        if ("client".equals(role)) {
            ossl.addAll(List.of("s_server", "-accept", "127.0.0.1:" + port, "-cert", "rsa.pem", "-key", "rsa.key",
                    "-naccept", "1"));
        } else {
            ossl.addAll(List.of("s_client", "-connect", "127.0.0.1:" + port));
        }
        ossl.addAll(List.of("-quiet", "-msg", "-msgfile", msg.toString()));
        ProcessBuilder pb = Processes.builder(ossl).directory(PKI.dir.toFile()).redirectOutput(data.toFile())
                .redirectError(dir.resolve("stderr").toFile());
        if ("server".equals(role)) {
            pb.redirectInput(new File("/dev/null")); // s_server would close at the end of its input: it stays open
        }
        if ("client".equals(role)) {
            server = pb.start();
            long end = System.currentTimeMillis() + 10_000;
            while (!Files.exists(msg) && System.currentTimeMillis() < end) {
                Thread.sleep(20);
            }
            Thread.sleep(300); // s_server opens its -msgfile before it listens
            client = java(log, jvm, tb);
            String out = finish(client, log);
            assertTrue(out.contains("SESSION " + protocol + " " + suite), tail(out));
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "s_server did not exit");
        } else {
            server = java(log, jvm, tb);
            awaitText(log, "LISTENING", server);
            client = pb.start();
            String out = finish(server, log);
            assertTrue(out.contains("SESSION " + protocol + " " + suite), tail(out));
            assertTrue(client.waitFor(30, TimeUnit.SECONDS), "s_client did not exit");
        }
        byte[] got = Files.readAllBytes(data);
        assertEquals(BYTES, got.length, "bytes openssl printed");
        assertArrayEquals(KeyLimitsPeer.data(BYTES), got, "the data arrived intact");
        return opensslReceived(Files.readString(msg, StandardCharsets.ISO_8859_1));
    }

    @ParameterizedTest(name = "{0} {1} to openssl")
    @CsvSource({"engine, client", "engine, server", "socket, client", "socket, server"})
    void keyUpdatesReachOpenssl(String kind, String role) throws Exception {
        assertEquals(expected(GCM_LIMIT), againstOpenssl(kind, role, "TLSv1.3", GCM, true), "KeyUpdates received");
    }

    @ParameterizedTest(name = "{0} {1} to openssl, ChaCha20-Poly1305 limit")
    @CsvSource({"engine, server", "socket, client"})
    void chachaHasItsOwnLimit(String kind, String role) throws Exception {
        assertEquals(expected(CHACHA_LIMIT), againstOpenssl(kind, role, "TLSv1.3", CHACHA, true),
                "KeyUpdates received");
    }

    /** TLS 1.2 cannot re-key without renegotiation: no limit applies, as in SunJSSE, and the data flows. */
    @ParameterizedTest(name = "{0} {1} TLS 1.2")
    @CsvSource({"engine, client", "socket, server"})
    void tls12HasNoLimit(String kind, String role) throws Exception {
        assertEquals(0, againstOpenssl(kind, role, "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", true));
    }

    /** The JDK's own 2^37 bytes never fire on ordinary traffic. */
    @ParameterizedTest(name = "{0} {1} default limits")
    @CsvSource({"engine, server", "socket, client"})
    void defaultLimitsStayQuiet(String kind, String role) throws Exception {
        assertEquals(0, againstOpenssl(kind, role, "TLSv1.3", GCM, false));
    }

    /** SunJSSE (default limits, in a JVM of its own) receives; its debug log names every KeyUpdate it consumed. */
    @ParameterizedTest(name = "{0} {1} to SunJSSE")
    @CsvSource({"engine, client", "engine, server", "socket, client", "socket, server"})
    void keyUpdatesReachSunJsse(String kind, String role) throws Exception {
        Path dir = Files.createTempDirectory("keylimits");
        Path tbLog = dir.resolve("tlsbridge");
        Path sunLog = dir.resolve("sunjsse");
        int port = Processes.freePort();
        String sunRole = "client".equals(role) ? "server" : "client";
        String[] tb = {"TLSBridge", kind, role, Integer.toString(port), Integer.toString(BYTES), "TLSv1.3", GCM};
        String[] sun = {"SunJSSE", "socket", sunRole, Integer.toString(port), Integer.toString(BYTES), "TLSv1.3", GCM};
        List<String> tbJvm = List.of("-Djava.security.properties=" + securityFile());
        List<String> sunJvm = List.of("-Djavax.net.debug=ssl:handshake");
        Process first;
        Process second;
        Path firstLog;
        Path secondLog;
        if ("client".equals(role)) {
            first = java(sunLog, sunJvm, sun);
            firstLog = sunLog;
            awaitText(sunLog, "LISTENING", first);
            second = java(tbLog, tbJvm, tb);
            secondLog = tbLog;
        } else {
            first = java(tbLog, tbJvm, tb);
            firstLog = tbLog;
            awaitText(tbLog, "LISTENING", first);
            second = java(sunLog, sunJvm, sun);
            secondLog = sunLog;
        }
        finish(second, secondLog);
        finish(first, firstLog);
        String sunOut = Files.readString(sunLog, StandardCharsets.ISO_8859_1);
        String tbOut = Files.readString(tbLog, StandardCharsets.ISO_8859_1);
        assertTrue(tbOut.contains("SESSION TLSv1.3 " + GCM), tail(tbOut));
        assertTrue(sunOut.contains("RECEIVED " + BYTES + " intact"), tail(sunOut));
        assertEquals(expected(GCM_LIMIT), count(sunOut, "Consuming KeyUpdate post-handshake message"),
                "KeyUpdates SunJSSE consumed");
    }
}
