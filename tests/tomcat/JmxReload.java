import com.sun.tools.attach.VirtualMachine;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Tomcat's certificate reload driven over JMX, as an operator's tool would,
 * through the local management agent of the Tomcat JVM (attach by pid: no
 * JMX port is opened). Run as a single-file program:
 *
 *   java JmxReload.java PID reload PORT [N]  reloadSslHostConfigs on the connector
 *                                            of PORT, N times (default 1); prints
 *                                            "reload ms min/median/max A/B/C"
 *   java JmxReload.java PID counts           GC, then tlsbridge's live native objects:
 *                                            "contexts=A connections=B keys=C heap=D"
 */
public class JmxReload {
    public static void main(String[] args) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            MBeanServerConnection s = c.getMBeanServerConnection();
            if (args[1].equals("reload")) {
                reload(s, args[2], args.length > 3 ? Integer.parseInt(args[3]) : 1);
            } else {
                counts(s);
            }
        }
    }

    private static void reload(MBeanServerConnection s, String port, int n) throws Exception {
        Set<ObjectName> names = s.queryNames(new ObjectName("Catalina:type=ProtocolHandler,port=" + port + ",*"), null);
        if (names.size() != 1) {
            throw new IllegalStateException("expected one ProtocolHandler for port " + port + ", found " + names);
        }
        ObjectName handler = names.iterator().next();
        List<Double> ms = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            s.invoke(handler, "reloadSslHostConfigs", null, null);
            ms.add((System.nanoTime() - t0) / 1e6);
        }
        Collections.sort(ms);
        System.out.printf("reload ms min/median/max %.1f/%.1f/%.1f%n", ms.get(0), ms.get(ms.size() / 2),
                ms.get(ms.size() - 1));
    }

    /** Counts once three readings in a row, each after a GC, agree: the Cleaner frees after collection. */
    private static void counts(MBeanServerConnection s) throws Exception {
        ObjectName memory = new ObjectName("java.lang:type=Memory");
        ObjectName tb = new ObjectName("org.tlsbridge:type=NativeObjects");
        String last = "";
        int same = 0;
        for (int i = 0; i < 100 && same < 3; i++) {
            s.invoke(memory, "gc", null, null);
            Thread.sleep(100);
            String now = "contexts=" + s.getAttribute(tb, "Contexts") + " connections="
                    + s.getAttribute(tb, "Connections") + " keys=" + s.getAttribute(tb, "Keys");
            same = now.equals(last) ? same + 1 : 0;
            last = now;
        }
        System.out.println(last + " heap=" + s.getAttribute(tb, "NativeHeapInUse"));
    }
}
