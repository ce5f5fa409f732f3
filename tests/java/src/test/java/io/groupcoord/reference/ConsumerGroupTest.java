package io.groupcoord.reference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer group of three stock Java consumers shares a six-partition topic, survives one member leaving,
 * and leaves committed offsets an admin can read back. The same test runs against Apache Kafka (to prove the
 * test) and against groupcoord (to prove the broker), so it uses only public client APIs.
 */
class ConsumerGroupTest {
    private static final int PARTITIONS = 6;
    private static final int MESSAGES_PER_ROUND = 300;
    private static final Duration PHASE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration POLL = Duration.ofMillis(100);

    private String bootstrap;
    private String topic;
    private String groupId;
    private Admin admin;
    private KafkaProducer<String, String> producer;
    private final List<KafkaConsumer<String, String>> consumers = new ArrayList<>();
    private final Set<String> received = new HashSet<>();
    private int deliveries;

    @BeforeEach
    void connect() throws Exception {
        bootstrap = ReferenceBroker.bootstrap();
        String run = ReferenceBroker.runId();
        topic = "java-orders-" + run;
        groupId = "java-billing-" + run;
        Properties adminProps = ReferenceBroker.clientProps(bootstrap);
        admin = Admin.create(adminProps);
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
        producer = new KafkaProducer<>(producerProps());
    }

    @AfterEach
    void close() {
        consumers.forEach(consumer -> consumer.close(Duration.ofSeconds(5)));
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void threeConsumersShareTheTopicAndTheSurvivorsTakeOverWhenOneLeaves() throws Exception {
        for (int i = 0; i < 3; i++) {
            KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps("member-" + i));
            consumer.subscribe(List.of(topic));
            consumers.add(consumer);
        }
        pollUntil("all three members own two partitions each", () -> everyMemberOwns(2));

        produce(0);
        Map<Integer, Integer> perMember = new HashMap<>();
        pollUntil("every message of round one is consumed", () -> received.size() == MESSAGES_PER_ROUND, perMember);
        assertEquals(3, perMember.keySet().size(), "each member consumed from its own partitions: " + perMember);
        consumers.forEach(KafkaConsumer::commitSync);

        KafkaConsumer<String, String> leaving = consumers.remove(2);
        leaving.close(Duration.ofSeconds(10));
        pollUntil("the two survivors own three partitions each", () -> everyMemberOwns(3));

        produce(1);
        pollUntil("every message of round two is consumed", () -> received.size() == 2 * MESSAGES_PER_ROUND);
        consumers.forEach(KafkaConsumer::commitSync);
        assertEquals(2 * MESSAGES_PER_ROUND, deliveries, "no message was delivered twice");

        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(groupId)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        assertEquals(PARTITIONS, committed.size(), "an offset is committed for every partition: " + committed);
        Map<TopicPartition, Long> endOffsets = consumers.get(0).endOffsets(committed.keySet());
        for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : committed.entrySet()) {
            assertEquals(endOffsets.get(entry.getKey()), entry.getValue().offset(),
                    "committed offset is the end of " + entry.getKey());
        }
        long total = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
        assertEquals(2L * MESSAGES_PER_ROUND, total, "committed offsets add up to every message produced");
    }

    private boolean everyMemberOwns(int partitions) {
        Set<TopicPartition> union = new HashSet<>();
        for (KafkaConsumer<String, String> consumer : consumers) {
            Set<TopicPartition> owned = consumer.assignment();
            if (owned.size() != partitions) {
                return false;
            }
            union.addAll(owned);
        }
        return union.size() == PARTITIONS;
    }

    private void pollUntil(String goal, BooleanSupplier done) {
        pollUntil(goal, done, new HashMap<>());
    }

    /** Polls every member in turn from this one thread, so each consumer is only ever used by one thread. */
    private void pollUntil(String goal, BooleanSupplier done, Map<Integer, Integer> perMember) {
        long deadline = System.nanoTime() + PHASE_TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + goal + " (received " + received.size() + ", assignments "
                        + consumers.stream().map(c -> c.assignment().toString()).collect(Collectors.joining(" | "))
                        + ")");
            }
            for (int i = 0; i < consumers.size(); i++) {
                for (ConsumerRecord<String, String> record : consumers.get(i).poll(POLL)) {
                    assertTrue(record.value().startsWith("order-"), "unexpected payload " + record.value());
                    received.add(record.value());
                    deliveries++;
                    perMember.merge(i, 1, Integer::sum);
                }
            }
        }
    }

    private void produce(int round) throws Exception {
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            String id = round + "-" + i;
            producer.send(new ProducerRecord<>(topic, "customer-" + id, "order-" + id));
        }
        producer.flush();
    }

    private Properties producerProps() {
        Properties props = ReferenceBroker.clientProps(bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return props;
    }

    private Properties consumerProps(String clientId) {
        Properties props = ReferenceBroker.clientProps(bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }
}
