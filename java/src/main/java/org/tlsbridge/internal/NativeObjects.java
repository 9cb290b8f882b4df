package org.tlsbridge.internal;

import java.lang.management.ManagementFactory;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The live native object counts as the platform MBean
 * {@code org.tlsbridge:type=NativeObjects}, so that an operator (jconsole,
 * a JMX client next to Tomcat's own MBeans) can check that a certificate
 * reload frees the old contexts, and see which OpenSSL serves (what a
 * security advisory asks). Registered by the server integrations,
 * never by the provider itself.
 */
public final class NativeObjects implements NativeObjectsMXBean {
    public static final String NAME = "org.tlsbridge:type=NativeObjects";

    private NativeObjects() {
    }

    /** Registers the MBean once per JVM; a JVM without JMX or a name already taken is left alone. */
    public static synchronized void register() {
        try {
            MBeanServer s = ManagementFactory.getPlatformMBeanServer();
            ObjectName n = new ObjectName(NAME);
            if (!s.isRegistered(n)) {
                s.registerMBean(new NativeObjects(), n);
            }
        } catch (InstanceAlreadyExistsException e) {
            // registered by another class loader's copy of tlsbridge: its counts are the same process's
        } catch (JMException | SecurityException e) {
            java.util.logging.Logger.getLogger("org.tlsbridge").fine("no " + NAME + " MBean: " + e);
        }
    }

    @Override
    public long getContexts() {
        return Diagnostics.liveContexts();
    }

    @Override
    public long getConnections() {
        return Diagnostics.liveConnections();
    }

    @Override
    public long getKeys() {
        return Diagnostics.liveKeys();
    }

    @Override
    public long getNativeHeapInUse() {
        return Diagnostics.nativeHeapInUse();
    }

    @Override
    public String getOpenSsl() {
        NativeLibrary.ensureLoaded();
        return Native.openSslVersion() + " (" + NativeLibrary.flavour() + ", " + NativeLibrary.loadedFrom() + ")";
    }

    @Override
    public String getRecordSealing() {
        return RecordSealing.describe();
    }
}
