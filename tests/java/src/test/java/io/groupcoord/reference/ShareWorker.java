package io.groupcoord.reference;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A share-group member run as its own JVM by ShareConsumerTest, so that it can be killed like a crashed
 * process: it polls until it holds records, prints "HELD value,value,..." and then waits, never acknowledging.
 * Arguments: bootstrap, group id, topic.
 */
public final class ShareWorker {
    private ShareWorker() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("client.id", "doomed");
        props.put("share.acknowledgement.mode", "explicit");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props);
        consumer.subscribe(List.of(args[2]));
        StringBuilder held = new StringBuilder();
        while (held.length() == 0) {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                held.append(held.length() == 0 ? "" : ",").append(record.value());
            }
        }
        System.out.println("HELD " + held);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
