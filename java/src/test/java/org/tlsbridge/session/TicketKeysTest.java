package org.tlsbridge.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyManagementException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.TestPki;

/**
 * Session-ticket keys from a file (docs/fleet.md): servers with the same
 * file resume each other's tickets, TLS 1.2 and 1.3; servers with different
 * files do not; a rotated file is picked up without a restart, tickets under
 * the previous key still resume and new ones are sealed under the new key;
 * bad files are refused at configuration time with a reason and no key
 * bytes, and a bad file at reload keeps the keys in use.
 */
class TicketKeysTest {
    /** Printable keys, so a leak into a message or log shows. */
    private static final String SECRET = "s3cr3t-k3y-bytes";

    @TempDir
    static Path dir;

    private static final List<String> logged = new CopyOnWriteArrayList<>();
    private static final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            logged.add(r.getLevel() + " " + r.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @BeforeAll
    static void watchFast() {
        // read by the watcher when it first starts (one JVM-wide thread)
        System.setProperty("tlsbridge.ticketKeys.checkMillis", "100");
        Logger.getLogger("org.tlsbridge").addHandler(capture);
    }

    @AfterAll
    static void stopCapture() {
        Logger.getLogger("org.tlsbridge").removeHandler(capture);
    }

    static byte[] key(char tag, int len) {
        byte[] k = new byte[len];
        byte[] s = SECRET.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < len; i++) {
            k[i] = i < 16 ? (byte) tag : s[i % s.length];
        }
        k[len - 1] = (byte) tag;
        return k;
    }

    static byte[] concat(byte[]... keys) {
        int n = 0;
        for (byte[] k : keys) {
            n += k.length;
        }
        byte[] out = new byte[n];
        int off = 0;
        for (byte[] k : keys) {
            System.arraycopy(k, 0, out, off, k.length);
            off += k.length;
        }
        return out;
    }

    /** Written through a rename, as rotation tooling does. */
    static Path write(String name, byte[] content, String mode) throws Exception {
        Path p = dir.resolve(name);
        Path tmp = dir.resolve(name + ".tmp");
        Files.write(tmp, content);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(mode));
        Files.move(tmp, p, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return p;
    }

    static SSLContext server(Path keys) throws Exception {
        SSLContext c = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        if (keys != null) {
            TlsBridgeProvider.setSessionTicketKeys(c, keys);
        }
        return c;
    }

    /** One connection of client to server, as if both were "fleet:443"; whether the server resumed. */
    static boolean connect(SSLContext client, SSLContext server, String protocol) throws Exception {
        EnginePair p = new EnginePair(client, server, true, "fleet.test", 443);
        p.client.setEnabledProtocols(new String[] {protocol});
        p.handshake();
        // the TLS 1.3 ticket comes after the handshake
        p.send(p.server, "hello".getBytes(StandardCharsets.US_ASCII));
        p.send(p.client, "bye".getBytes(StandardCharsets.US_ASCII));
        assertEquals(protocol, p.server.getSession().getProtocol());
        boolean resumed = TlsBridgeProvider.isResumed(p.server.getSession());
        assertEquals(resumed, TlsBridgeProvider.isResumed(p.client.getSession()));
        p.close(p.client);
        return resumed;
    }

    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void sharedKeysResumeAcrossContexts(String protocol) throws Exception {
        Path shared = write("shared-" + protocol, key('A', 80), "rw-------");
        SSLContext one = server(shared), two = server(shared);
        SSLContext other = server(write("other-" + protocol, key('B', 80), "rw-r-----"));
        SSLContext nginx48 = server(write("short-" + protocol, key('C', 48), "r--------"));
        SSLContext random = server(null);
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);

        assertFalse(connect(client, one, protocol), "first connection: full handshake");
        assertTrue(connect(client, two, protocol), "ticket of one resumes on two (same file)");
        assertTrue(connect(client, one, protocol), "and back");
        assertFalse(connect(client, other, protocol), "another file: full handshake");
        assertFalse(connect(client, random, protocol), "random keys: full handshake");
        assertFalse(connect(client, nginx48, protocol));
        assertTrue(connect(client, nginx48, protocol), "nginx's 48-byte keys");
    }

    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
    void rotationKeepsOldTicketsAndSealsWithTheNewKey(String protocol) throws Exception {
        byte[] oldKey = key('O', 80), newKey = key('N', 80);
        Path file = write("rotate-" + protocol, oldKey, "rw-------");
        SSLContext node = server(file);
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext newOnly = server(write("new-only-" + protocol, newKey, "rw-------"));
        assertFalse(connect(client, node, protocol));

        logged.clear();
        write("rotate-" + protocol, concat(newKey, oldKey), "rw-------");
        awaitLog("new session ticket keys from " + file);
        assertTrue(connect(client, node, protocol), "a ticket under the previous key resumes after rotation");
        // a new client's ticket is sealed under the new key: a node with only that key takes it
        SSLContext fresh = Contexts.client(Contexts.TLSBRIDGE);
        assertFalse(connect(fresh, node, protocol));
        assertTrue(connect(fresh, newOnly, protocol), "new tickets are sealed under the first key");
        for (String line : logged) {
            assertFalse(line.contains(SECRET.substring(0, 8)), line);
        }
    }

    @Test
    void badFileAtReloadKeepsTheKeys() throws Exception {
        Path file = write("reload", key('R', 80), "rw-------");
        SSLContext a = server(file), b = server(file);
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        assertFalse(connect(client, a, "TLSv1.3"));
        logged.clear();
        write("reload", new byte[47], "rw-------");
        awaitLog("47 bytes");
        assertTrue(connect(client, b, "TLSv1.3"), "the keys read last stay in use");
        for (String line : logged) {
            assertFalse(line.contains(SECRET.substring(0, 8)), line);
        }
    }

    @Test
    void badFilesAreRefusedAtConfiguration() throws Exception {
        SSLContext c = server(null);
        assertRefused(c, dir.resolve("missing"), "No such file");
        assertRefused(c, write("short", key('S', 80 - 1), "rw-------"), "79 bytes");
        assertRefused(c, write("odd", concat(key('S', 80), key('T', 48)), "rw-------"), "128 bytes");
        assertRefused(c, write("world", key('W', 80), "rw-r--r--"), "readable by every user");
        assertRefused(c, write("zero", new byte[80], "rw-------"), "all zero");
        assertRefused(c, write("dup", concat(key('D', 80), key('D', 80)), "rw-------"), "same name");
        assertRefused(c, dir, "not a regular file");
        SSLException e = assertThrows(SSLException.class,
                () -> TlsBridgeProvider.setSessionTicketKeys(Contexts.server(Contexts.sun(), "rsa"), dir));
        assertTrue(e.getMessage().contains("not a tlsbridge SSLContext"), e.getMessage());
    }

    @Test
    void systemPropertyConfiguresEveryContextAndABadFileFailsInit() throws Exception {
        Path good = write("property", key('P', 80), "rw-------");
        Path bad = write("property-bad", key('P', 80), "rw-rw-rw-");
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        System.setProperty("tlsbridge.ticketKeys", good.toString());
        try {
            SSLContext a = Contexts.server(Contexts.TLSBRIDGE, "rsa"), b = Contexts.server(Contexts.TLSBRIDGE, "rsa");
            assertFalse(connect(client, a, "TLSv1.3"));
            assertTrue(connect(client, b, "TLSv1.3"));
            System.setProperty("tlsbridge.ticketKeys", bad.toString());
            SSLContext c = SSLContext.getInstance("TLS", Contexts.TLSBRIDGE);
            TestPki pki = TestPki.get();
            KeyManagementException e = assertThrows(KeyManagementException.class,
                    () -> c.init(pki.keyManagers("rsa"), pki.trustManagers(), null));
            assertTrue(e.getMessage().contains("readable by every user"), e.getMessage());
            assertTrue(e.getMessage().contains("-Dtlsbridge.ticketKeys: session ticket key file " + bad + " "),
                    e.getMessage());
        } finally {
            System.clearProperty("tlsbridge.ticketKeys");
        }
    }

    private static void assertRefused(SSLContext c, Path file, String why) {
        SSLException e = assertThrows(SSLException.class, () -> TlsBridgeProvider.setSessionTicketKeys(c, file));
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET.substring(0, 8)), e.getMessage());
    }

    private static void awaitLog(String text) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < end) {
            for (String line : logged) {
                if (line.contains(text)) {
                    return;
                }
            }
            Thread.sleep(20);
        }
        fail("no log line with \"" + text + "\" within 10 s: " + logged);
    }
}
