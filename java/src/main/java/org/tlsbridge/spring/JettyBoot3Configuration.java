package org.tlsbridge.spring;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.web.embedded.jetty.JettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Embedded Jetty in Spring Boot 3.x (Jetty 12.0), whose factories apply every JettyServerCustomizer bean. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"org.eclipse.jetty.server.Server", "org.springframework.boot.web.embedded.jetty.JettyServerCustomizer"})
class JettyBoot3Configuration {
    @Bean
    JettyServerCustomizer tlsBridgeJetty3ServerCustomizer(Environment env) {
        NativeCheck check = new NativeCheck(env);
        return server -> JettyConnectors.customize(server, check);
    }
}
