package org.tlsbridge.spring;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.jetty.JettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Embedded Jetty in Spring Boot 4.x (module spring-boot-jetty, Jetty 12.1), same hook under its new name. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"org.eclipse.jetty.server.Server", "org.springframework.boot.jetty.JettyServerCustomizer"})
class JettyBoot4Configuration {
    @Bean
    JettyServerCustomizer tlsBridgeJetty4ServerCustomizer(Environment env) {
        NativeCheck check = new NativeCheck(env);
        return server -> JettyConnectors.customize(server, check);
    }
}
