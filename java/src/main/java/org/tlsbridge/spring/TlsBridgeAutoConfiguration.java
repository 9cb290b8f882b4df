package org.tlsbridge.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Import;

/**
 * Spring Boot auto-configuration: the embedded server's TLS, configured as
 * usual from {@code server.ssl.*} or an SSL bundle, is served by tlsbridge.
 * Listed in {@code META-INF/spring/...AutoConfiguration.imports}; without
 * Spring Boot on the class path nothing here is ever loaded.
 *
 * <p>Spring Boot 3.5 and 4.0 name their embedded-server types differently,
 * so each server and generation has its own small configuration class,
 * selected by {@code @ConditionalOnClass} on names only that generation has.
 * {@code tlsbridge.enabled=false} turns all of it off.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "tlsbridge", name = "enabled", havingValue = "true", matchIfMissing = true)
@Import({TomcatBoot3Configuration.class, TomcatBoot4Configuration.class, JettyBoot3Configuration.class,
        JettyBoot4Configuration.class, NettyBoot3Configuration.class, NettyBoot4Configuration.class})
public class TlsBridgeAutoConfiguration {
}
