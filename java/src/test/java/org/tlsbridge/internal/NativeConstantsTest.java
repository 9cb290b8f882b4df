package org.tlsbridge.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The load-time check of the numbers Java shares with libtlsbridge: the
 * built library agrees with {@link NativeConstants} entry for entry, and a
 * table that differs in any one value, or lacks or adds a name, is refused
 * with that name in the message.
 */
class NativeConstantsTest {
    private static String[] names;
    private static long[] values;

    @BeforeAll
    static void load() {
        NativeLibrary.ensureLoaded();
        names = Native.constantNames();
        values = Native.constantValues();
    }

    @Test
    void libraryAndJavaHaveTheSameNamesAndValues() {
        assertEquals(NativeConstants.java().keySet(), new LinkedHashSet<>(List.of(names)),
                "jni_constants.c and NativeConstants list the same names");
        assertDoesNotThrow(() -> NativeConstants.check(names, values, "test"));
        assertEquals(0x4000L, NativeConstants.java().get("SSL_OP_NO_TICKET"), "long constants compare as longs");
    }

    @Test
    void everyDriftedValueIsRefusedByName() {
        for (int i = 0; i < names.length; i++) {
            long[] drifted = values.clone();
            drifted[i] += 1;
            String name = names[i];
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> NativeConstants.check(names, drifted, "test"), name);
            assertTrue(e.getMessage().contains(name + " (library " + drifted[i] + ", Java " + values[i] + ")"),
                    e.getMessage());
        }
    }

    @Test
    void aNameOnOneSideOnlyIsRefused() {
        String[] fewer = Arrays.copyOf(names, names.length - 1);
        long[] fewerValues = Arrays.copyOf(values, values.length - 1);
        String last = names[names.length - 1];
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> NativeConstants.check(fewer, fewerValues, "test"));
        assertTrue(e.getMessage().contains(last + " (not in the library)"), e.getMessage());

        String[] more = Arrays.copyOf(names, names.length + 1);
        more[names.length] = "TB_SO_REUSEPORT";
        long[] moreValues = Arrays.copyOf(values, values.length + 1);
        e = assertThrows(IllegalStateException.class, () -> NativeConstants.check(more, moreValues, "test"));
        assertTrue(e.getMessage().contains("TB_SO_REUSEPORT (not in NativeConstants)"), e.getMessage());

        assertThrows(IllegalStateException.class, () -> NativeConstants.check(names, fewerValues, "test"));
    }
}
