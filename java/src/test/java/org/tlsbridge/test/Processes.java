package org.tlsbridge.test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Real peers (openssl, curl) as child processes, with their output captured. */
public final class Processes {
    private Processes() {
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A running child whose combined output is collected in the background. */
    public static final class Child implements AutoCloseable {
        public final Process process;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final Thread pump;

        Child(Process p) {
            this.process = p;
            this.pump = new Thread(() -> {
                try (InputStream in = p.getInputStream()) {
                    byte[] b = new byte[8192];
                    int n;
                    while ((n = in.read(b)) > 0) {
                        synchronized (out) {
                            out.write(b, 0, n);
                        }
                    }
                } catch (IOException e) {
                    // process ended
                }
            }, "child-output");
            pump.setDaemon(true);
            pump.start();
        }

        public String output() {
            synchronized (out) {
                return out.toString(StandardCharsets.UTF_8);
            }
        }

        /** Waits until the output contains text (e.g. "ACCEPT"). */
        public boolean await(String text, long millis) throws InterruptedException {
            long end = System.currentTimeMillis() + millis;
            while (System.currentTimeMillis() < end) {
                if (output().contains(text)) {
                    return true;
                }
                if (!process.isAlive()) {
                    return output().contains(text);
                }
                Thread.sleep(20);
            }
            return false;
        }

        public int waitFor(long seconds) throws InterruptedException {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return -1;
            }
            pump.join(2000);
            return process.exitValue();
        }

        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    public static Child start(String... cmd) throws IOException {
        return new Child(builder(cmd).redirectErrorStream(true).start());
    }

    public static Child start(java.nio.file.Path dir, String... cmd) throws IOException {
        return new Child(builder(cmd).directory(dir.toFile()).redirectErrorStream(true).start());
    }

    /**
     * A builder for a child process (curl, openssl) without the sanitizer
     * runtime that {@code scripts/test}'s ASan pass preloads into this JVM:
     * curl hangs with libasan preloaded, and a child's findings are not ours.
     */
    public static ProcessBuilder builder(List<String> cmd) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        String preload = pb.environment().get("LD_PRELOAD");
        if (preload != null && preload.contains("libasan")) {
            pb.environment().remove("LD_PRELOAD");
            pb.environment().remove("ASAN_OPTIONS");
            pb.environment().remove("UBSAN_OPTIONS");
        }
        return pb;
    }

    public static ProcessBuilder builder(String... cmd) {
        return builder(List.of(cmd));
    }

    /** What a finished child left: its exit status and combined output. */
    public static final class Run {
        public final int exit;
        public final String out;

        Run(int exit, String out) {
            this.exit = exit;
            this.out = out;
        }

        @Override
        public String toString() {
            return "exit " + exit + ":\n" + out;
        }
    }

    /**
     * Runs cmd to completion with stdin (may be null) as its input; an
     * IOException if it outlives timeoutSeconds, so no test hangs on a peer.
     */
    public static Run run(byte[] stdin, int timeoutSeconds, List<String> cmd)
            throws IOException, InterruptedException {
        Process p = builder(cmd).redirectErrorStream(true).start();
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
            // the child may exit before reading its input (a refused handshake)
        }
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor();
            throw new IOException("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd));
        }
        return new Run(p.exitValue(), new String(out.join(), StandardCharsets.UTF_8));
    }
}
