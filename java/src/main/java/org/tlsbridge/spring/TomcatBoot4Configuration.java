package org.tlsbridge.spring;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Embedded Tomcat in Spring Boot 4.x (module spring-boot-tomcat), same hook under its new name. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"org.apache.catalina.startup.Tomcat",
        "org.springframework.boot.tomcat.TomcatConnectorCustomizer"})
class TomcatBoot4Configuration {
    @Bean
    TomcatConnectorCustomizer tlsBridgeTomcat4ConnectorCustomizer(Environment env) {
        NativeCheck check = new NativeCheck(env);
        return connector -> TomcatConnectors.customize(connector, check);
    }
}
