package org.tlsbridge.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.tlsbridge.Info;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.internal.NativeObjects;
import org.tlsbridge.internal.RecordSealing;

/**
 * Whether tlsbridge seals its records is said where a user looks: java -jar,
 * the log and the NativeObjects MBean. Sealing is on exactly for the
 * releases the seal was checked with (OpenSSL 3.5.5 and 4.0.3, patch level
 * included), whatever flavour serves.
 */
class RecordSealingTest {
    private static boolean checkedRelease(String version) {
        return version.startsWith("OpenSSL 3.5.5 ") || version.startsWith("OpenSSL 4.0.3 ");
    }

    @Test
    void onExactlyForTheCheckedReleases() {
        String v = TlsBridgeProvider.openSslVersion();
        assertEquals(checkedRelease(v), RecordSealing.checkedRelease(), v);
        String d = RecordSealing.describe();
        if (checkedRelease(v)) {
            assertTrue(d.startsWith("records sealed by tlsbridge (" + v), d);
        } else {
            assertTrue(d.startsWith("records sealed by OpenSSL: " + v + " is not a release"), d);
        }
    }

    @Test
    void theSwitchIsSaid() {
        System.setProperty("tlsbridge.seal", "false");
        try {
            assertTrue(!RecordSealing.on());
            assertTrue(RecordSealing.describe().startsWith("records sealed by OpenSSL: "), RecordSealing.describe());
        } finally {
            System.clearProperty("tlsbridge.seal");
        }
    }

    @Test
    void javaJarAndTheMBeanSayIt() throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            Info.main(new String[0]);
        } finally {
            System.setOut(old);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("\n" + RecordSealing.describe() + "\n"), text);
        NativeObjects.register();
        Object a = ManagementFactory.getPlatformMBeanServer().getAttribute(new ObjectName(NativeObjects.NAME),
                "RecordSealing");
        assertEquals(RecordSealing.describe(), a);
    }
}
