package org.tlsbridge.soak;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.Security;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.internal.Diagnostics;

/**
 * The soak: engine pairs in memory and native-descriptor sockets on
 * 127.0.0.1 run side by side until the handshake and byte targets are both
 * met or the wall-clock bound is hit. Every few seconds the workers close what
 * they hold and wait, the JVM collects (twice, so the Cleaner's work is
 * counted), and RSS, glibc's native heap, the Java heap and the open
 * descriptors are written to samples.csv. At the end, the median of the
 * samples just after the warm-up is compared with the median of the last
 * ones; growth above the bound, or any transfer/handshake/close that went
 * wrong, is a FAIL (exit 1).
 */
public final class Soak {
    private Soak() {
    }

    private static long parseSize(String v) {
        String s = v.trim().toUpperCase(Locale.ROOT);
        long mul = 1;
        if (s.endsWith("G")) {
            mul = 1_000_000_000L;
        } else if (s.endsWith("M")) {
            mul = 1_000_000L;
        } else if (s.endsWith("K")) {
            mul = 1_000L;
        }
        if (mul != 1) {
            s = s.substring(0, s.length() - 1);
        }
        return (long) (Double.parseDouble(s.replace("_", "")) * mul);
    }

    record Sample(double t, long handshakes, long resumed, long bytes, long rssKb, long nativeHeap, long javaHeap,
            long fds, int threads, boolean quiet, long pauseMs) {
    }

    public static void main(String[] args) throws Exception {
        long handshakes = 1_000_000;
        long bytes = 50_000_000_000L;
        double minutes = 120;
        double sampleSeconds = 5;
        double warmup = 0.10;
        double maxGrowth = 5.0;
        int engineThreads = 2;
        int socketClients = 4;
        Path pki = null;
        Path out = Paths.get(".");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--handshakes" -> { handshakes = parseSize(v); i++; }
                case "--bytes" -> { bytes = parseSize(v); i++; }
                case "--minutes" -> { minutes = Double.parseDouble(v); i++; }
                case "--sample-seconds" -> { sampleSeconds = Double.parseDouble(v); i++; }
                case "--warmup" -> { warmup = Double.parseDouble(v); i++; }
                case "--max-growth" -> { maxGrowth = Double.parseDouble(v); i++; }
                case "--engine-threads" -> { engineThreads = Integer.parseInt(v); i++; }
                case "--socket-clients" -> { socketClients = Integer.parseInt(v); i++; }
                case "--pki" -> { pki = Paths.get(v); i++; }
                case "--out" -> { out = Paths.get(v); i++; }
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        if (pki == null) {
            throw new IllegalArgumentException("--pki DIR (ca.pem, ec.p12, rsa.p12) is required");
        }
        Files.createDirectories(out);
        TlsBridgeProvider provider = new TlsBridgeProvider();
        Security.insertProviderAt(provider, 1);
        long nh = Diagnostics.nativeHeapInUse();
        if (nh < 0) {
            throw new IllegalStateException("no mallinfo2 in this C library: the native heap cannot be measured");
        }
        long t0 = System.nanoTime();
        long deadline = t0 + (long) (minutes * 60e9);
        Shared sh = new Shared(handshakes, bytes, deadline, pki, provider);
        System.out.printf("soak: targets %,d handshakes, %,d bytes, at most %.1f min; %d engine threads, "
                + "%d socket clients; OpenSSL %s; started %s%n", handshakes, bytes, minutes, engineThreads,
                socketClients, TlsBridgeProvider.openSslVersion(), Instant.now());

        List<Thread> engines = new ArrayList<>();
        for (int i = 0; i < engineThreads; i++) {
            Thread t = new Thread(new EngineLoad(sh, 1000 + i), "soak-engine-" + i);
            engines.add(t);
        }
        SocketLoad sockets = new SocketLoad(sh, socketClients);
        engines.forEach(Thread::start);
        sockets.start();

        List<Sample> samples = new ArrayList<>();
        Path csv = out.resolve("samples.csv");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(csv))) {
            w.println("elapsed_s,handshakes,resumed,bytes,rss_kb,native_heap_bytes,java_heap_bytes,fds,threads,"
                    + "quiesced,pause_ms");
            long next = System.nanoTime();
            while (true) {
                next += (long) (sampleSeconds * 1e9);
                while (!sh.done() && System.nanoTime() < next) {
                    Thread.sleep(Math.max(1, Math.min(200, (next - System.nanoTime()) / 1_000_000)));
                }
                if (sh.done()) {
                    break;
                }
                Sample s = sample(sh, t0);
                samples.add(s);
                w.printf(Locale.ROOT, "%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d%n", s.t, s.handshakes, s.resumed, s.bytes,
                        s.rssKb, s.nativeHeap, s.javaHeap, s.fds, s.threads, s.quiet ? 1 : 0, s.pauseMs);
                w.flush();
                System.out.printf(Locale.ROOT, "[%6.0fs] %,d handshakes (%,d resumed), %.2f GB, RSS %.1f MB, "
                        + "native %.1f MB, heap %.1f MB, %d fds, errors %d%n", s.t, s.handshakes, s.resumed,
                        s.bytes / 1e9, s.rssKb / 1024.0, s.nativeHeap / 1048576.0, s.javaHeap / 1048576.0, s.fds,
                        sh.errors.get());
            }
            for (Thread t : engines) {
                t.join();
            }
            sockets.stop();
            // one last quiet sample, after everything has been closed
            Sample s = sample(sh, t0);
            samples.add(s);
            w.printf(Locale.ROOT, "%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d%n", s.t, s.handshakes, s.resumed, s.bytes,
                    s.rssKb, s.nativeHeap, s.javaHeap, s.fds, s.threads, s.quiet ? 1 : 0, s.pauseMs);
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        int rc = verdict(sh, samples, elapsed, warmup, maxGrowth, out, args, handshakes, bytes, minutes);
        System.exit(rc);
    }

    private static Sample sample(Shared sh, long t0) throws Exception {
        long p0 = System.nanoTime();
        boolean quiet = sh.pauseAll(30_000);
        try {
            System.gc();
            Thread.sleep(200); // the Cleaners free what the collection found
            System.gc();
            Thread.sleep(50);
            // what the last collection left, pool by pool: allocation since then does not count
            long heap = 0;
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                if (p.getType() == MemoryType.HEAP && p.getCollectionUsage() != null) {
                    heap += p.getCollectionUsage().getUsed();
                }
            }
            long nat = Diagnostics.nativeHeapInUse();
            long rss = rssKb();
            long fds;
            try (Stream<Path> l = Files.list(Paths.get("/proc/self/fd"))) {
                fds = l.count() - 1; // the listing's own descriptor
            }
            int threads = Thread.activeCount();
            long pause = (System.nanoTime() - p0) / 1_000_000;
            return new Sample((System.nanoTime() - t0) / 1e9, sh.handshakes.get(), sh.resumed.get(), sh.bytes.get(),
                    rss, nat, heap, fds, threads, quiet, pause);
        } finally {
            sh.resumeAll();
        }
    }

    private static long rssKb() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS in /proc/self/status");
    }

    private static double median(List<Sample> l, java.util.function.ToLongFunction<Sample> f) {
        long[] v = l.stream().mapToLong(f).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
    }

    private static int verdict(Shared sh, List<Sample> all, double elapsed, double warmup, double maxGrowth, Path out,
            String[] args, long hTarget, long bTarget, double minutes) throws IOException {
        List<String> lines = new ArrayList<>();
        int passed = 0;
        int failed = 0;
        // the closing sample is taken with every worker gone: left out of the comparison
        List<Sample> samples = all.size() > 1 ? all.subList(0, all.size() - 1) : all;
        double w = warmup * elapsed;
        List<Sample> base = new ArrayList<>();
        List<Sample> fin = new ArrayList<>();
        for (Sample s : samples) {
            if (s.t > w && s.t <= w + 0.10 * elapsed) {
                base.add(s);
            }
            if (s.t >= 0.90 * elapsed) {
                fin.add(s);
            }
        }
        if (base.isEmpty()) {
            samples.stream().filter(s -> s.t > w).findFirst().ifPresent(base::add);
        }
        if (fin.isEmpty() && !samples.isEmpty()) {
            fin.add(samples.get(samples.size() - 1));
        }
        long h = sh.handshakes.get();
        long b = sh.bytes.get();
        lines.add("tlsbridge soak, " + Instant.now() + ", OpenSSL " + TlsBridgeProvider.openSslVersion() + ", "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        lines.add("arguments: " + String.join(" ", args));
        lines.add(String.format(Locale.ROOT, "duration: %.1f s (%.1f min); bound %.1f min", elapsed, elapsed / 60,
                minutes));
        lines.add(String.format(Locale.ROOT, "handshakes: %,d of %,d (%.1f%%): engine %,d, socket %,d (%,d resumed); resumed in all %,d "
                + "(%.1f%%); TLS 1.2 %,d; with SunJSSE on one side %,d", h, hTarget, 100.0 * h / Math.max(1, hTarget),
                sh.engineHandshakes.get(), sh.socketHandshakes.get(), sh.socketResumed.get(), sh.resumed.get(), 100.0 * sh.resumed.get()
                        / Math.max(1, h), sh.tls12.get(), sh.sunHandshakes.get()));
        lines.add(String.format(Locale.ROOT, "bytes (application data, each checked on arrival): %,d = %.2f GB of "
                + "%.2f GB (%.1f%%): engine %.2f GB, socket %.2f GB", b, b / 1e9, bTarget / 1e9, 100.0 * b
                / Math.max(1, bTarget), sh.engineBytes.get() / 1e9, sh.socketBytes.get() / 1e9));
        lines.add(String.format(Locale.ROOT, "rates: %.0f handshakes/s, %.1f MB/s", h / elapsed, b / elapsed / 1e6));
        boolean reached = h >= hTarget && b >= bTarget;
        if (!reached) {
            double need = Math.max(hTarget / Math.max(1.0, h), bTarget / Math.max(1.0, b)) * elapsed;
            lines.add(String.format(Locale.ROOT, "targets NOT reached within the bound; at this run's rates the "
                    + "full targets would take about %.0f min", need / 60));
        }
        lines.add(String.format(Locale.ROOT, "closes: %,d graceful (close_notify both ways, states checked), "
                + "%,d abrupt socket closes, %,d one-sided engine closes, %,d engines dropped without close "
                + "(%,d mid-handshake) for the Cleaner; %,d server-side connections ended by the client's abrupt "
                + "close", sh.graceful.get(), sh.abrupt.get(), sh.oneSided.get(), sh.abandoned.get(),
                sh.abandonedMidHandshake.get(), sh.serverAborts.get()));
        long notQuiet = samples.stream().filter(s -> !s.quiet).count();
        lines.add(String.format(Locale.ROOT, "samples: %d (every one taken with the load paused: %s); warm-up: "
                + "first %.0f%% (%.0f s); baseline: median of %d samples in (%.0f s, %.0f s]; final: median of "
                + "the last %d samples (t >= %.0f s)", samples.size(), notQuiet == 0 ? "yes" : notQuiet + " not quiet",
                warmup * 100, w, base.size(), w, w + 0.1 * elapsed, fin.size(), 0.9 * elapsed));
        lines.add("");
        lines.add(String.format("%-28s %16s %16s %9s  %s", "series", "baseline", "final", "growth", "verdict"));
        record Series(String name, java.util.function.ToLongFunction<Sample> f, double unit, String u) {
        }
        // for the plot: the windows (minutes) and each series' baseline and final level
        List<String> gp = new ArrayList<>();
        gp.add(String.format(Locale.ROOT, "w0 = %.4f; w1 = %.4f; f0 = %.4f", w / 60, (w + 0.1 * elapsed) / 60,
                0.9 * elapsed / 60));
        gp.add(String.format(Locale.ROOT, "runinfo = \"%,d handshakes (engine %,d, socket %,d), %.2f GB in %.1f min\"",
                h, sh.engineHandshakes.get(), sh.socketHandshakes.get(), b / 1e9, elapsed / 60));
        String[] keys = {"rss", "nat", "heap", "fds"};
        int ki = 0;
        for (Series s : List.of(new Series("RSS", Sample::rssKb, 1024, "MB"),
                new Series("native heap (mallinfo2)", Sample::nativeHeap, 1048576, "MB"),
                new Series("Java heap after GC", Sample::javaHeap, 1048576, "MB"),
                new Series("open descriptors", Sample::fds, 1, ""))) {
            double b0 = median(base, s.f);
            double b1 = median(fin, s.f);
            double g = (b1 - b0) / b0 * 100;
            gp.add(String.format(Locale.ROOT, "b_%s = %.4f; f_%s = %.4f; g_%s = \"%+.2f%%\"", keys[ki], b0 / s.unit,
                    keys[ki], b1 / s.unit, keys[ki], g));
            ki++;
            boolean ok = !Double.isNaN(g) && g <= maxGrowth;
            if (ok) {
                passed++;
            } else {
                failed++;
            }
            lines.add(String.format(Locale.ROOT, "%-28s %13.2f %-2s %13.2f %-2s %+8.2f%%  %s", s.name, b0 / s.unit, s.u,
                    b1 / s.unit, s.u, g, ok ? "ok (<= " + maxGrowth + "%)" : "FAIL (> " + maxGrowth + "%)"));
        }
        Sample last = all.get(all.size() - 1);
        lines.add(String.format(Locale.ROOT, "after the loads stopped: RSS %.1f MB, native heap %.1f MB, Java heap "
                + "%.1f MB, %d fds", last.rssKb / 1024.0, last.nativeHeap / 1048576.0, last.javaHeap / 1048576.0,
                last.fds));
        lines.add("");
        if (sh.errors.get() == 0) {
            passed++;
            lines.add("errors: 0 (no handshake, transfer, byte check or close went wrong)");
        } else {
            failed++;
            lines.add("errors: " + sh.errors.get() + " FAIL; first ones:");
            sh.errorLog.stream().limit(20).forEach(e -> lines.add("  " + e));
        }
        if (h > 0 && b > 0) {
            passed++;
        } else {
            failed++;
            lines.add("FAIL: nothing was done (handshakes " + h + ", bytes " + b + ")");
        }
        if (samples.size() >= 3) {
            passed++;
        } else {
            failed++;
            lines.add("FAIL: fewer than 3 samples");
        }
        lines.add(failed == 0 ? "RESULT: PASS" : "RESULT: FAIL");
        lines.add("checks: " + passed + " passed, " + failed + " failed");
        Files.write(out.resolve("summary.txt"), lines);
        Files.write(out.resolve("verdict.gp"), gp);
        lines.forEach(System.out::println);
        return failed == 0 ? 0 : 1;
    }
}
