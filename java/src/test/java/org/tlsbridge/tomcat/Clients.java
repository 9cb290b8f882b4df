package org.tlsbridge.tomcat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.tlsbridge.test.Processes;

/** curl and openssl s_client as child processes, bounded in time. */
final class Clients {
    private Clients() {
    }

    static final class Run {
        final int exit;
        final String out;

        Run(int exit, String out) {
            this.exit = exit;
            this.out = out;
        }

        @Override
        public String toString() {
            return "exit " + exit + ":\n" + out;
        }
    }

    static Run run(byte[] stdin, int timeoutSeconds, List<String> cmd) throws IOException, InterruptedException {
        Process p = Processes.builder(cmd).redirectErrorStream(true).start();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = p.getInputStream()) {
                return in.readAllBytes();
            } catch (IOException e) {
                return new byte[0];
            }
        });
        try (OutputStream o = p.getOutputStream()) {
            if (stdin != null) {
                o.write(stdin);
            }
        } catch (IOException e) {
            // the client may exit before reading its input (a refused handshake)
        }
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor();
            throw new IOException("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd));
        }
        return new Run(p.exitValue(), new String(out.join(), StandardCharsets.UTF_8));
    }

    /** curl -v against https://HOST:port PATH, HOST resolved to 127.0.0.1, server verified against the test CA. */
    static Run curl(TomcatPki pki, String host, int port, String path, String... extra)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(Arrays.asList("curl", "-sS", "-v", "--max-time", "60", "--cacert",
                pki.path("ca.pem"), "--resolve", host + ":" + port + ":127.0.0.1"));
        cmd.addAll(Arrays.asList(extra));
        cmd.add("https://" + host + ":" + port + path);
        return run(null, 90, cmd);
    }

    /** openssl s_client sending one GET and waiting for the reply. */
    static Run sClient(TomcatPki pki, int port, String serverName, String path, String... extra)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(Arrays.asList("openssl", "s_client", "-connect", "127.0.0.1:" + port,
                "-CAfile", pki.path("ca.pem"), "-verify_return_error", "-ign_eof"));
        if (serverName != null) {
            cmd.addAll(Arrays.asList("-servername", serverName));
        }
        cmd.addAll(Arrays.asList(extra));
        String req = "GET " + path + " HTTP/1.1\r\nHost: " + (serverName == null ? "localhost" : serverName)
                + "\r\nConnection: close\r\n\r\n";
        return run(req.getBytes(StandardCharsets.US_ASCII), 60, cmd);
    }
}
