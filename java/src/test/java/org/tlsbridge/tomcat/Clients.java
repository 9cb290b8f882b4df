package org.tlsbridge.tomcat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tlsbridge.test.Processes;

/** curl and openssl s_client as child processes, bounded in time. */
final class Clients {
    private Clients() {
    }

    /** curl -v against https://HOST:port PATH, HOST resolved to 127.0.0.1, server verified against the test CA. */
    static Processes.Run curl(TomcatPki pki, String host, int port, String path, String... extra)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(Arrays.asList("curl", "-sS", "-v", "--max-time", "60", "--cacert",
                pki.path("ca.pem"), "--resolve", host + ":" + port + ":127.0.0.1"));
        cmd.addAll(Arrays.asList(extra));
        cmd.add("https://" + host + ":" + port + path);
        return Processes.run(null, 90, cmd);
    }

    /** openssl s_client sending one GET and waiting for the reply. */
    static Processes.Run sClient(TomcatPki pki, int port, String serverName, String path, String... extra)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(Arrays.asList("openssl", "s_client", "-connect", "127.0.0.1:" + port,
                "-CAfile", pki.path("ca.pem"), "-verify_return_error", "-ign_eof"));
        if (serverName != null) {
            cmd.addAll(Arrays.asList("-servername", serverName));
        }
        cmd.addAll(Arrays.asList(extra));
        String req = "GET " + path + " HTTP/1.1\r\nHost: " + (serverName == null ? "localhost" : serverName)
                + "\r\nConnection: close\r\n\r\n";
        return Processes.run(req.getBytes(StandardCharsets.US_ASCII), 60, cmd);
    }
}
