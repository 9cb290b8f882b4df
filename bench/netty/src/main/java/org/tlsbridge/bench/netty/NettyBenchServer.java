package org.tlsbridge.bench.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.Version;
import java.io.File;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import org.tlsbridge.TlsBridgeProvider;

/**
 * Netty 4.1 HTTP/1.1 server for the benchmark, on NIO like Tomcat's connector:
 * GET /N answers N bytes of 'a', as bench/server's servlet does, so a Netty
 * cell differs from a Tomcat cell by the server and from another Netty cell by
 * the TLS engine alone.
 *
 * <pre>
 * NettyBenchServer --impl openssl|tlsbridge|jdk --cert PEM --key PEM
 *                  [--port 0] [--protocols TLSv1.3] [--ciphers TLS_AES_128_GCM_SHA256,...]
 * </pre>
 *
 * openssl is Netty's OpenSSL engine (SslProvider.OPENSSL, netty-tcnative); tlsbridge
 * and jdk are Netty's JDK engine mode, with the TLSBridge provider handed to
 * SslContextBuilder.sslContextProvider or on SunJSSE. Before it listens the
 * server checks that the engine it hands out is the one asked for and prints
 * {@code BENCH-PROVIDER <json>}, then {@code LISTENING 127.0.0.1 <port>}; the
 * negotiated protocol and suite of a sample of connections follow as
 * {@code NEGOTIATED <protocol> <suite>} lines (see {@link NegotiatedSample}).
 */
public final class NettyBenchServer {
    private NettyBenchServer() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = parse(args);
        String impl = o.getOrDefault("impl", "jdk");
        SslContext ssl = context(impl, o);
        System.out.println("BENCH-PROVIDER " + proof(impl, ssl));
        System.out.flush();

        EventLoopGroup boss = new NioEventLoopGroup(1);
        // Netty's default: two event loops per processor the JVM sees (the
        // runner pins the server to one CPU)
        EventLoopGroup workers = new NioEventLoopGroup();
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast("tls", ssl.newHandler(ch.alloc()))
                                    .addLast("http", new HttpServerCodec())
                                    .addLast("bytes", new BytesHandler());
                        }
                    });
            Channel server = b.bind("127.0.0.1", Integer.parseInt(o.getOrDefault("port", "0"))).sync().channel();
            int port = ((InetSocketAddress) server.localAddress()).getPort();
            System.out.println("LISTENING 127.0.0.1 " + port);
            System.out.flush();
            server.closeFuture().sync();
        } finally {
            boss.shutdownGracefully();
            workers.shutdownGracefully();
        }
    }

    static SslContext context(String impl, Map<String, String> o) throws Exception {
        SslContextBuilder b = SslContextBuilder.forServer(new File(require(o, "cert")), new File(require(o, "key")));
        if (o.containsKey("protocols")) {
            b.protocols(o.get("protocols").split(","));
        }
        if (o.containsKey("ciphers")) {
            b.ciphers(Arrays.asList(o.get("ciphers").split(",")));
        }
        switch (impl) {
            case "openssl":
                if (!OpenSsl.isAvailable()) {
                    fail("netty-tcnative did not load on this machine: " + OpenSsl.unavailabilityCause());
                }
                b.sslProvider(SslProvider.OPENSSL);
                break;
            case "tlsbridge":
                // the provider object goes to Netty alone; the JCA's list stays as it is
                b.sslProvider(SslProvider.JDK).sslContextProvider(new TlsBridgeProvider());
                break;
            case "jdk":
                b.sslProvider(SslProvider.JDK);
                break;
            default:
                throw new IllegalArgumentException("unknown --impl " + impl + " (openssl, tlsbridge, jdk)");
        }
        return b.build();
    }

    /**
     * What serves this process, as JSON, after checking that it is what
     * --impl asked for: a figure labelled "Netty's OpenSSL engine" that ran
     * on the JDK's engine would compare nothing.
     */
    static String proof(String impl, SslContext ssl) {
        SSLEngine probe = ssl.newEngine(ByteBufAllocator.DEFAULT);
        String engine = probe.getClass().getName();
        ReferenceCountUtil.release(probe);
        String provider;
        String library = "";
        if (impl.equals("openssl")) {
            if (ssl instanceof JdkSslContext || !engine.startsWith("io.netty.handler.ssl.")) {
                fail("asked for Netty's OpenSSL engine, got " + engine);
            }
            provider = "netty-tcnative";
            library = OpenSsl.versionString();
        } else {
            if (!(ssl instanceof JdkSslContext)) {
                fail("asked for Netty's JDK engine mode, got " + ssl.getClass().getName());
            }
            provider = ((JdkSslContext) ssl).context().getProvider().getName();
            String want = impl.equals("tlsbridge") ? "TLSBridge" : "SunJSSE";
            if (!provider.equals(want)) {
                fail("SSLContext served by " + provider + ", not " + want);
            }
        }
        Version v = Version.identify().get("netty-handler");
        return "{\"impl\":\"" + impl + "\",\"provider\":\"" + provider + "\",\"engine\":\"" + engine
                + "\",\"library\":\"" + library.replace("\"", "") + "\",\"netty\":\""
                + (v == null ? "unknown" : v.artifactVersion()) + "\"}";
    }

    private static void fail(String why) {
        System.out.println("BENCH-FAILED " + why);
        System.out.flush();
        System.exit(2);
    }

    static String require(Map<String, String> o, String k) {
        String v = o.get(k);
        if (v == null) {
            throw new IllegalArgumentException("--" + k + " is required");
        }
        return v;
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }
}
