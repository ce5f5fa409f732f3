package io.groupcoord.reference;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.FileReader;
import java.io.IOException;
import java.io.Reader;
import java.util.Properties;
import java.util.UUID;

/**
 * What the reference test classes share: the broker they run against (-Dbootstrap, or GROUPCOORD_BOOTSTRAP
 * through the pom), a run id that keeps topic and group names apart between runs, and the client properties
 * every client starts from (bootstrap.servers plus the -DclientConfig file, as Kafka's tools take
 * --command-config: security.protocol, sasl.*, ssl.*; nothing more on a PLAINTEXT broker).
 */
final class ReferenceBroker {
    private ReferenceBroker() {
    }

    static String bootstrap() {
        String bootstrap = System.getProperty("bootstrap", "");
        if (bootstrap.isBlank() || bootstrap.startsWith("${")) {
            fail("pass the broker address with -Dbootstrap=HOST:PORT or GROUPCOORD_BOOTSTRAP");
        }
        return bootstrap;
    }

    static String runId() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    static Properties clientProps(String bootstrap) {
        Properties props = new Properties();
        String path = System.getProperty("clientConfig", "");
        if (!path.isBlank() && !path.startsWith("${")) {
            try (Reader reader = new FileReader(path)) {
                props.load(reader);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read client config " + path, e);
            }
        }
        props.put("bootstrap.servers", bootstrap);
        return props;
    }
}
