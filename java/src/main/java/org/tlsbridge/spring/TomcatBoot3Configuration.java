package org.tlsbridge.spring;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.web.embedded.tomcat.TomcatConnectorCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Embedded Tomcat in Spring Boot 3.x, whose factories apply every TomcatConnectorCustomizer bean. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"org.apache.catalina.startup.Tomcat",
        "org.springframework.boot.web.embedded.tomcat.TomcatConnectorCustomizer"})
class TomcatBoot3Configuration {
    @Bean
    TomcatConnectorCustomizer tlsBridgeTomcat3ConnectorCustomizer(Environment env) {
        NativeCheck check = new NativeCheck(env);
        return connector -> TomcatConnectors.customize(connector, check);
    }
}
