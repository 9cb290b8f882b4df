package org.tlsbridge.features;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.tlsbridge.test.OneShotServer;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/** OpenSSL's command-line peers: the system's, and the 3.5 build scripts/openssl caches. */
public final class OpensslPeers {
    private static final TestPki PKI = TestPki.get();

    private OpensslPeers() {
    }

    /**
     * The `openssl` command of the OpenSSL 3.5 build (scripts/lib/openssl.sh's
     * tb_openssl_dir 3.5): the peer that speaks the ML-KEM groups. The jar's
     * bundled flavour is built from the same cache, so it is there wherever
     * the build ran; when it is not, this fails loudly rather than skip.
     */
    public static String openssl35() throws Exception {
        Path root = Path.of(System.getProperty("user.dir"));
        while (root != null && !Files.exists(root.resolve("scripts/lib/openssl.sh"))) {
            root = root.getParent();
        }
        if (root == null) {
            throw new AssertionError("cannot find scripts/lib/openssl.sh above " + System.getProperty("user.dir"));
        }
        Process p = new ProcessBuilder("bash", "-c", "TB_ROOT=\"$1\"; source \"$1/scripts/lib/common.sh\"; "
                + "source \"$1/scripts/lib/openssl.sh\"; tb_openssl_dir 3.5", "-", root.toString())
                .redirectErrorStream(true).start();
        String dir = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor();
        Path bin = Path.of(dir, "bin", "openssl");
        if (!Files.isExecutable(bin)) {
            throw new AssertionError("OpenSSL 3.5's openssl command is MISSING at " + bin
                    + " (run scripts/openssl to build it): the ML-KEM interop tests cannot run");
        }
        return bin.toString();
    }

    /** Runs s_client (openssl: the command) against a tlsbridge server that greets and closes; returns its output. */
    static String sClient(String openssl, SSLContext server, Consumer<SSLEngine> setup, OneShotServer.Exchange x,
            String... args) throws Exception {
        try (OneShotServer srv = new OneShotServer()) {
            CompletableFuture<Void> done = srv.serve(server, 1, true, setup, x != null ? x : c -> {
                c.write("hi\n".getBytes(StandardCharsets.US_ASCII));
            });
            List<String> cmd = new ArrayList<>(List.of(openssl, "s_client", "-connect", "127.0.0.1:" + srv.port,
                    "-CAfile", "ca.pem", "-ign_eof"));
            cmd.addAll(List.of(args));
            try (Processes.Child c = Processes.start(PKI.dir, cmd.toArray(new String[0]))) {
                c.process.getOutputStream().close();
                long end = System.currentTimeMillis() + 30_000;
                while (!done.isDone() && System.currentTimeMillis() < end
                        && (c.process.isAlive() || System.currentTimeMillis() < end - 27_000)) {
                    Thread.sleep(20);
                }
                if (!done.isDone()) {
                    throw new AssertionError("server did not finish; s_client said:\n" + c.output());
                }
                done.get();
                c.waitFor(20);
                return c.output();
            }
        }
    }
}
