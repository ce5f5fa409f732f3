package io.groupcoord.reference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.FileReader;
import java.io.IOException;
import java.io.Reader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The stock Java client refused by a broker's ACLs, with the exception type a secured Kafka gives it. Two
 * principals on the same listener: the refused one (-DclientConfig) may READ the topic but has no ACL on any
 * group and no WRITE; the control (-DcontrolClientConfig) may produce to and consume the topic with groups
 * named -DcontrolGroupPrefix..., so the refusals are the ACLs' doing, not a broken listener. -DhiddenTopic is
 * an existing topic the control principal has no ACL on.
 */
class AclRefusalTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(200);

    private String bootstrap;
    private String topic;
    private String hiddenTopic;
    private String controlGroupPrefix;
    private String run;

    @BeforeEach
    void configure() {
        bootstrap = required("bootstrap");
        topic = required("topic");
        hiddenTopic = required("hiddenTopic");
        controlGroupPrefix = required("controlGroupPrefix");
        run = UUID.randomUUID().toString().substring(0, 8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void aConsumerWithoutReadOnItsGroupGetsGroupAuthorizationExceptionFromPoll(String protocol) {
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(consumerProps("clientConfig", "java-refused-" + protocol + "-" + run, protocol))) {
            consumer.subscribe(List.of(topic));
            assertInstanceOf(GroupAuthorizationException.class, pollUntilThrown(consumer));
        }
    }

    @Test
    void aConsumerWithoutReadOnItsGroupGetsGroupAuthorizationExceptionFromCommit() {
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(consumerProps("clientConfig", "java-refused-commit-" + run, "classic"))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            assertThrows(GroupAuthorizationException.class,
                    () -> consumer.commitSync(Map.of(partition, new OffsetAndMetadata(0)), DEADLINE));
        }
    }

    @Test
    void aProducerWithoutWriteOnTheTopicGetsTopicAuthorizationException() {
        Properties props = producerProps("clientConfig");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        assertInstanceOf(TopicAuthorizationException.class, sendFailure(props));
    }

    /**
     * The default (idempotent) producer asks for a producer id first, and Kafka grants one only with
     * IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679): with neither, a fatal
     * ClusterAuthorizationException before any record is sent. The client hands it over in one of two ways,
     * by timing alone: as the send's failure when the InitProducerId answer comes after send() was called, or
     * wrapped as the cause of send()'s own KafkaException ("Cannot perform send because at least one previous
     * transactional or idempotent request has failed") when it came first. Both are the refusal; any other
     * failure is not.
     */
    @Test
    void anIdempotentProducerWithoutWriteOnAnyTopicGetsClusterAuthorizationException() {
        Throwable failure = sendFailure(producerProps("clientConfig"));
        Throwable refusal = failure instanceof ClusterAuthorizationException ? failure : failure.getCause();
        assertInstanceOf(ClusterAuthorizationException.class, refusal,
                () -> "the failure and its cause: " + failure + " / " + failure.getCause());
    }

    private Throwable sendFailure(Properties props) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(topic, "k", "not allowed")).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
        return fail("the send succeeded");
    }

    @Test
    void aConsumerWithReadOnItsGroupButNoneOnTheTopicGetsTopicAuthorizationException() {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                consumerProps("controlClientConfig", controlGroupPrefix + "java-hidden-" + run, "classic"))) {
            consumer.subscribe(List.of(hiddenTopic));
            TopicAuthorizationException thrown = assertInstanceOf(TopicAuthorizationException.class,
                    pollUntilThrown(consumer));
            assertTrue(thrown.unauthorizedTopics().contains(hiddenTopic), "names the topic: " + thrown.unauthorizedTopics());
        }
    }

    /** The control: the principal the ACLs allow produces, consumes in a group and commits on the same listener. */
    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void theControlPrincipalProducesConsumesAndCommits(String protocol) throws Exception {
        String value = "allowed-" + protocol + "-" + run;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps("controlClientConfig"))) {
            producer.send(new ProducerRecord<>(topic, "k", value)).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        }
        String group = controlGroupPrefix + "java-" + protocol + "-" + run;
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(consumerProps("controlClientConfig", group, protocol))) {
            consumer.subscribe(List.of(topic));
            List<String> seen = new ArrayList<>();
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (!seen.contains(value)) {
                if (System.nanoTime() > deadline) {
                    fail("the control consumer did not receive " + value + " (saw " + seen.size() + " records)");
                }
                for (ConsumerRecord<String, String> record : consumer.poll(POLL)) {
                    seen.add(record.value());
                }
            }
            consumer.commitSync(DEADLINE);
            TopicPartition partition = new TopicPartition(topic, 0);
            OffsetAndMetadata committed = consumer.committed(java.util.Set.of(partition), DEADLINE).get(partition);
            assertEquals(consumer.position(partition, DEADLINE), committed.offset(), "the commit is read back");
        }
    }

    private static RuntimeException pollUntilThrown(KafkaConsumer<String, String> consumer) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                consumer.poll(POLL);
            } catch (RuntimeException e) {
                return e;
            }
        }
        return fail("poll did not raise within " + DEADLINE);
    }

    private static String required(String name) {
        String value = System.getProperty(name, "");
        if (value.isBlank() || value.startsWith("${")) {
            fail("pass -D" + name + "=...");
        }
        return value;
    }

    /** Client security properties (security.protocol, sasl.*) from the properties file named by -D{property}. */
    private static Properties security(String property) {
        Properties props = new Properties();
        String path = required(property);
        try (Reader reader = new FileReader(path)) {
            props.load(reader);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read client config " + path, e);
        }
        return props;
    }

    private Properties producerProps(String configProperty) {
        Properties props = security(configProperty);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return props;
    }

    private Properties consumerProps(String configProperty, String groupId, String protocol) {
        Properties props = security(configProperty);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (protocol.equals("classic")) {
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        }
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }
}
