package io.groupcoord.reference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three stock KafkaShareConsumers (KIP-932) share a three-partition topic as a queue. With no failure every
 * record is delivered and acknowledged exactly once; when a member is killed (its own JVM, SIGKILL, while it
 * holds acquired records it never acknowledged), it is fenced once its share session times out, its partition
 * goes to the survivors, and its records are delivered again once their acquisition locks expire — none is lost. Only public client APIs, so the same test proves itself against
 * Apache Kafka and proves the broker against groupcoord.
 */
class ShareConsumerTest {
    private static final int PARTITIONS = 3;
    private static final int MESSAGES = 300;
    private static final int LOCK_MS = 15_000;  // the smallest share.record.lock.duration.ms a group may set
    // The group's share.session.timeout.ms and share.heartbeat.interval.ms (IncrementalAlterConfigs on GROUP): a
    // killed member is fenced after SESSION_MS, and the survivors hear of its partition at their next heartbeat.
    // The brokers under test allow them (group.share.min.session.timeout.ms=2000,
    // group.share.min.heartbeat.interval.ms=500; Kafka's default minimums are 45 s and 5 s).
    private static final int SESSION_MS = 4_000;
    private static final int HEARTBEAT_MS = 1_000;
    private static final Duration PHASE_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration POLL = Duration.ofMillis(100);

    private String bootstrap;
    private String topic;
    private String groupId;
    private Admin admin;
    private final List<KafkaShareConsumer<String, String>> consumers = new ArrayList<>();
    private final Map<String, Integer> acknowledged = new HashMap<>();
    private final Map<String, Integer> deliveries = new HashMap<>();

    @BeforeEach
    void connect() throws Exception {
        bootstrap = ReferenceBroker.bootstrap();
        String run = ReferenceBroker.runId();
        topic = "java-jobs-" + run;
        groupId = "java-workers-" + run;
        admin = Admin.create(ReferenceBroker.clientProps(bootstrap));
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, groupId);
        admin.incrementalAlterConfigs(Map.of(group, List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms", Integer.toString(LOCK_MS)),
                        AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("share.session.timeout.ms", Integer.toString(SESSION_MS)),
                        AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("share.heartbeat.interval.ms", Integer.toString(HEARTBEAT_MS)),
                        AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        Properties props = ReferenceBroker.clientProps(bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < MESSAGES; i++) {
                producer.send(new ProducerRecord<>(topic, i % PARTITIONS, null, "job-" + i));
            }
            producer.flush();
        }
    }

    @AfterEach
    void close() {
        consumers.forEach(consumer -> consumer.close(Duration.ofSeconds(5)));
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }

    private KafkaShareConsumer<String, String> member(String clientId) {
        Properties props = ReferenceBroker.clientProps(bootstrap);
        props.put("group.id", groupId);
        props.put("client.id", clientId);
        props.put("share.acknowledgement.mode", "explicit");
        props.put("max.poll.records", "20");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props);
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    @Test
    void threeMembersAcknowledgeEveryRecordExactlyOnce() {
        for (int i = 0; i < 3; i++) {
            consumers.add(member("worker-" + i));
        }
        Set<Integer> working = new HashSet<>();
        pollUntil("every record is acknowledged", () -> acknowledged.size() == MESSAGES, consumers, working);
        assertEquals(MESSAGES, acknowledged.size());  // job-0 .. job-299, each acknowledged: no gap
        for (Map.Entry<String, Integer> entry : deliveries.entrySet()) {
            assertEquals(1, entry.getValue(), entry.getKey() + " was delivered more than once");
        }
        for (Map.Entry<String, Integer> entry : acknowledged.entrySet()) {
            assertEquals(1, entry.getValue(), entry.getKey() + " was acknowledged more than once");
        }
        assertTrue(working.size() >= 2, "the records were shared out among the members: " + working);
    }

    @Test
    void recordsHeldByAKilledMemberAreDeliveredAgainAndNoneIsLost() throws Exception {
        // The doomed member runs in its own JVM, so that killing it is a crash: no LeaveGroup, no release.
        Process doomed = new ProcessBuilder("java", "-cp", System.getProperty("java.class.path"),
                ShareWorker.class.getName(), bootstrap, groupId, topic).redirectErrorStream(true).start();
        Set<String> held = new HashSet<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(doomed.getInputStream()))) {
            long deadline = System.nanoTime() + PHASE_TIMEOUT.toNanos();
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith("HELD ")) {
                    held.addAll(Arrays.asList(line.substring(5).split(",")));
                    break;
                }
                if (System.nanoTime() > deadline) {
                    fail("the doomed member never held records");
                }
            }
            // The survivors join while it holds its records; then it is killed (SIGKILL).
            List<KafkaShareConsumer<String, String>> survivors = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                survivors.add(member("survivor-" + i));
            }
            consumers.addAll(survivors);
            doomed.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            assertTrue(!held.isEmpty(), "the doomed member held records when it was killed");
            pollUntil("every record is acknowledged by the survivors", () -> acknowledged.size() == MESSAGES,
                    survivors, new HashSet<>());
        } finally {
            doomed.destroyForcibly();
        }
        for (String value : held) {
            assertEquals(1, acknowledged.get(value), value + " (held by the killed member) was acknowledged once");
        }
        assertEquals(MESSAGES, acknowledged.size(), "no record was lost");
        for (Map.Entry<String, Integer> entry : deliveries.entrySet()) {
            assertEquals(1, entry.getValue(), entry.getKey() + " was delivered to the survivors more than once");
        }
        for (Map.Entry<String, Integer> entry : acknowledged.entrySet()) {
            assertEquals(1, entry.getValue(), entry.getKey() + " was acknowledged more than once");
        }
    }

    /** Polls the given members in turn from this one thread, acknowledging every record (ACCEPT). */
    private void pollUntil(String goal, BooleanSupplier done, List<KafkaShareConsumer<String, String>> members,
                           Set<Integer> working) {
        long deadline = System.nanoTime() + PHASE_TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + goal + " (acknowledged " + acknowledged.size() + ")");
            }
            for (int i = 0; i < members.size(); i++) {
                KafkaShareConsumer<String, String> consumer = members.get(i);
                ConsumerRecords<String, String> records = consumer.poll(POLL);
                for (ConsumerRecord<String, String> record : records) {
                    deliveries.merge(record.value(), 1, Integer::sum);
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                    working.add(i);
                }
                if (!records.isEmpty()) {
                    consumer.commitSync(Duration.ofSeconds(10)).forEach((partition, error) -> {
                        if (error.isPresent()) {
                            fail("acknowledging " + partition + " failed: " + error.get());
                        }
                    });
                    for (ConsumerRecord<String, String> record : records) {
                        acknowledged.merge(record.value(), 1, Integer::sum);
                    }
                }
            }
        }
    }
}
