package io.groupcoord.reference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
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
 * The Java client's exactly-once consume-transform-produce loop: a read_committed consumer in a group, a
 * transactional producer that writes the transformed records and commits the consumer's offsets with
 * sendOffsetsToTransaction, one transaction aborted on purpose (its records written, then thrown away and
 * reprocessed). Afterwards the output read at read_committed holds every input record exactly once, the
 * aborted records are visible only at read_uncommitted, and the group's committed offsets are the input's end.
 * Uses only public client APIs, so the same test proves itself against Apache Kafka.
 */
class EosPipelineTest {
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 600;
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Duration POLL = Duration.ofMillis(100);

    private String bootstrap;
    private String input;
    private String output;
    private String groupId;
    private Admin admin;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void connect() throws Exception {
        bootstrap = ReferenceBroker.bootstrap();
        String run = ReferenceBroker.runId();
        input = "eos-in-" + run;
        output = "eos-out-" + run;
        groupId = "eos-app-" + run;
        Properties adminProps = ReferenceBroker.clientProps(bootstrap);
        admin = Admin.create(adminProps);
        admin.createTopics(List.of(new NewTopic(input, PARTITIONS, (short) 1), new NewTopic(output, PARTITIONS, (short) 1)))
                .all().get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void consumeTransformProduceIsExactlyOnce() throws Exception {
        Properties plain = ReferenceBroker.clientProps(bootstrap);
        plain.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        plain.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> source = new KafkaProducer<>(plain)) {
            for (int i = 0; i < RECORDS; i++) {
                source.send(new ProducerRecord<>(input, i % PARTITIONS, "k" + i, "record-" + i));
            }
            source.flush();
        }

        Properties txnProps = new Properties();
        txnProps.putAll(plain);
        txnProps.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "eos-java-" + groupId);
        KafkaProducer<String, String> producer = new KafkaProducer<>(txnProps);
        closing.add(() -> producer.close(Duration.ofSeconds(5)));
        producer.initTransactions();

        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(groupId, "read_committed"));
        closing.add(() -> consumer.close(Duration.ofSeconds(5)));
        consumer.subscribe(List.of(input));

        int processed = 0;
        int transactions = 0;
        int aborted = 0;
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (processed < RECORDS) {
            assertTrue(Instant.now().isBefore(deadline), "the pipeline stalled after " + processed + " records");
            ConsumerRecords<String, String> records = consumer.poll(POLL);
            if (records.isEmpty()) {
                continue;
            }
            producer.beginTransaction();
            Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
            Map<TopicPartition, Long> first = new HashMap<>();
            for (ConsumerRecord<String, String> record : records) {
                producer.send(new ProducerRecord<>(output, record.partition(), record.key(), record.value().toUpperCase()));
                TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                first.putIfAbsent(tp, record.offset());
                next.put(tp, new OffsetAndMetadata(record.offset() + 1));
            }
            transactions++;
            if (transactions == 2) {
                // written, then thrown away: the records go back to be processed again
                producer.flush();
                producer.abortTransaction();
                aborted += records.count();
                first.forEach(consumer::seek);
                continue;
            }
            producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
            producer.commitTransaction();
            processed += records.count();
        }
        assertTrue(aborted > 0, "one transaction with records was aborted");

        Map<String, Integer> committedRead = readAll("read_committed", RECORDS);
        assertEquals(RECORDS, committedRead.size(), "every input record is in the output");
        for (int i = 0; i < RECORDS; i++) {
            assertEquals(1, committedRead.getOrDefault("RECORD-" + i, 0), "RECORD-" + i + " exactly once");
        }
        Map<String, Integer> uncommittedRead = readAll("read_uncommitted", RECORDS + aborted);
        int total = uncommittedRead.values().stream().mapToInt(Integer::intValue).sum();
        assertEquals(RECORDS + aborted, total, "the aborted records are in the log, only read_uncommitted sees them");

        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(groupId)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        long sum = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            OffsetAndMetadata o = offsets.get(new TopicPartition(input, p));
            assertTrue(o != null, "an offset is committed for input partition " + p + ": " + offsets);
            sum += o.offset();
        }
        assertEquals(RECORDS, sum, "the committed input offsets add up to every record processed");
    }

    private Map<String, Integer> readAll(String isolation, int expected) {
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(consumerProps("reader-" + UUID.randomUUID(), isolation))) {
            List<TopicPartition> parts = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                parts.add(new TopicPartition(output, p));
            }
            reader.assign(parts);
            reader.seekToBeginning(parts);
            int count = 0;
            Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
            Instant quietUntil = null;
            while (Instant.now().isBefore(deadline)) {
                ConsumerRecords<String, String> records = reader.poll(POLL);
                for (ConsumerRecord<String, String> record : records) {
                    seen.merge(record.value(), 1, Integer::sum);
                    count++;
                }
                if (count >= expected && quietUntil == null) {
                    quietUntil = Instant.now().plus(Duration.ofSeconds(1));
                }
                if (quietUntil != null && Instant.now().isAfter(quietUntil)) {
                    break;
                }
            }
        }
        return seen;
    }

    private Properties consumerProps(String group, String isolation) {
        Properties props = ReferenceBroker.clientProps(bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }
}
