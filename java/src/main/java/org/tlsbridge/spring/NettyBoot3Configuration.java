package org.tlsbridge.spring;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.embedded.netty.NettyServerCustomizer;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Reactor Netty (WebFlux) in Spring Boot 3.x, whose factory applies its NettyServerCustomizers after its
 * own SSL.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"reactor.netty.http.server.HttpServer",
        "org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory"})
class NettyBoot3Configuration {
    @Bean
    WebServerFactoryCustomizer<NettyReactiveWebServerFactory> tlsBridgeNetty3FactoryCustomizer(Environment env) {
        return new Customizer(new NativeCheck(env));
    }

    /** A class, not a lambda, so that Spring sees its factory type and applies it to Netty factories only. */
    static final class Customizer implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory> {
        private final NativeCheck check;

        Customizer(NativeCheck check) {
            this.check = check;
        }

        @Override
        public void customize(NettyReactiveWebServerFactory factory) {
            NettyServerCustomizer tlsbridge = server -> NettyServers.secure(server, factory, check);
            factory.setServerCustomizers(NettyServers.first(tlsbridge, factory.getServerCustomizers()));
        }
    }
}
