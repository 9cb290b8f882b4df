package org.tlsbridge.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.tlsbridge.test.Processes;

/**
 * A bad tlsbridge.openssl is reported as the user wrote it: a Spring Boot
 * property on the command line as {@code --tlsbridge.openssl=...}, in
 * application.properties with the file and line, as an environment variable
 * by its name, and only a {@code -D} as {@code -D}. Each case is a Spring Boot
 * application in a JVM of its own, since the choice is read once, when the
 * library loads.
 */
class OpensslSettingTest {
    private static final String NEITHER = "bogus is neither \"bundled\" nor \"system\"";

    /** The child: starts a Spring Boot application (no web server) with args and asks NativeCheck. */
    public static void main(String[] args) {
        SpringApplication app = new SpringApplicationBuilder(Empty.class).web(WebApplicationType.NONE)
                .logStartupInfo(false).build();
        try (ConfigurableApplicationContext ctx = app.run(args)) {
            try {
                System.out.println("RESULT " + (new NativeCheck(ctx.getEnvironment()).usable() ? "loaded" : "JSSE"));
            } catch (IllegalStateException e) {
                System.out.println("RESULT " + e.getMessage());
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Empty {
    }

    private static String run(List<String> jvmArgs, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(OpensslSettingTest.class.getName());
        cmd.add("--tlsbridge.required=true");
        cmd.addAll(List.of(args));
        ProcessBuilder pb = Processes.builder(cmd).redirectErrorStream(true);
        pb.environment().remove("TLSBRIDGE_OPENSSL");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        for (String line : out.split("\n")) {
            if (line.startsWith("RESULT ")) {
                return line.substring("RESULT ".length());
            }
        }
        throw new AssertionError("no RESULT line:\n" + out);
    }

    @Test
    void commandLineArgument() throws Exception {
        String msg = run(List.of(), Map.of(), "--tlsbridge.openssl=bogus");
        assertTrue(msg.contains(" --tlsbridge.openssl=" + NEITHER), msg);
        assertFalse(msg.contains("-Dtlsbridge.openssl"), msg);
    }

    @Test
    void applicationProperties() throws Exception {
        Path dir = Files.createTempDirectory("tlsbridge-spring");
        Path props = dir.resolve("application.properties");
        try {
            Files.writeString(props, "# tlsbridge\ntlsbridge.openssl=bogus\n");
            String msg = run(List.of(), Map.of(), "--spring.config.location=file:" + props);
            assertTrue(msg.contains(" tlsbridge.openssl=bogus (")
                    && msg.endsWith(") is neither \"bundled\" nor \"system\""), msg);
            // the file and the line it is on
            assertTrue(msg.contains(props.toString()) && msg.contains(" - 2:"), msg);
            assertFalse(msg.contains("-Dtlsbridge.openssl") || msg.contains("--tlsbridge.openssl"), msg);
        } finally {
            Files.deleteIfExists(props);
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void environmentVariable() throws Exception {
        String msg = run(List.of(), Map.of("TLSBRIDGE_OPENSSL", "bogus"));
        assertTrue(msg.contains(" TLSBRIDGE_OPENSSL=bogus (environment variable) is neither"), msg);
    }

    @Test
    void systemPropertyStaysMinusD() throws Exception {
        // -D wins over the Spring property, and is what the error names
        String msg = run(List.of("-Dtlsbridge.openssl=bogus"), Map.of(), "--tlsbridge.openssl=system");
        assertTrue(msg.contains(" -Dtlsbridge.openssl=" + NEITHER), msg);
        assertFalse(msg.contains("--tlsbridge.openssl"), msg);
    }

    @Test
    void aGoodValueLoads() throws Exception {
        assertEquals("loaded", run(List.of(), Map.of(), "--tlsbridge.openssl=bundled"));
    }
}
