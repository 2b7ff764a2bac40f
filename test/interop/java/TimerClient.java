// Java peer of the timer and namespace proofs (issue 15), run by test/interop/java-timer-ns.ts:
//   produce --namesrv A --topic T --count N [--delay-ms D | --deliver-in-ms D] [--namespace NS] [--namespace-v2 NS] [--group G]
//            one {"type":"sent","msgId","sendTime","topic","recallHandle"} line per message (setDelayTimeMs / setDeliverTimeMs)
//            [--recall-every K]: messages 0, K, 2K… are recalled at once (producer.recallMessage), each with a
//            {"type":"recalled","msgId","answer"} or {"type":"recall-failed","msgId","error"} line
//   consume  --namesrv A --topic T --group G [--namespace NS] [--namespace-v2 NS] [--queues Q] [--timeout-ms M]
//            {"type":"ready"} once started, then {"type":"received","msgId","receiveTime","topic","body","properties"}
//            per message until SIGTERM or the timeout, then {"type":"done","count"}
import java.nio.charset.StandardCharsets;
import java.util.TreeMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

public class TimerClient {
    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) RefClient.fail("usage: TimerClient produce|consume [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "produce": produce(o); break;
                case "consume": consume(o); break;
                default: RefClient.fail("unknown command " + argv[0]);
            }
        } catch (Exception e) {
            RefClient.fail(e.toString());
        }
        System.exit(0);
    }

    private static void produce(Map<String, String> o) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "timer_java_pg"));
        p.setNamesrvAddr(RefClient.req(o, "namesrv"));
        if (o.containsKey("namespace")) p.setNamespace(o.get("namespace"));
        if (o.containsKey("namespace-v2")) p.setNamespaceV2(o.get("namespace-v2"));
        p.setInstanceName("timer-java-p-" + ProcessHandle.current().pid());
        p.start();
        int count = Integer.parseInt(o.getOrDefault("count", "1"));
        for (int i = 0; i < count; i++) {
            Message m = new Message(RefClient.req(o, "topic"), ("java-" + i).getBytes(StandardCharsets.UTF_8));
            long sendTime = System.currentTimeMillis();
            if (o.containsKey("delay-ms")) m.setDelayTimeMs(Long.parseLong(o.get("delay-ms")));
            if (o.containsKey("deliver-in-ms")) m.setDeliverTimeMs(sendTime + Long.parseLong(o.get("deliver-in-ms")));
            SendResult r = p.send(m);
            String handle = r.getRecallHandle();
            RefClient.print(new RefClient.Json().put("type", "sent").put("msgId", r.getMsgId()).put("sendTime", sendTime)
                .put("topic", r.getMessageQueue().getTopic()).put("status", r.getSendStatus().name())
                .put("recallHandle", handle == null ? "" : handle));
            int every = Integer.parseInt(o.getOrDefault("recall-every", "0"));
            if (every > 0 && i % every == 0) {
                try {
                    String answer = p.recallMessage(RefClient.req(o, "topic"), handle);
                    RefClient.print(new RefClient.Json().put("type", "recalled").put("msgId", r.getMsgId()).put("answer", answer));
                } catch (Exception e) {
                    RefClient.print(new RefClient.Json().put("type", "recall-failed").put("msgId", r.getMsgId()).put("error", e.toString()));
                }
            }
        }
        p.shutdown();
    }

    private static void consume(Map<String, String> o) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(RefClient.req(o, "group"));
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        if (o.containsKey("namespace")) c.setNamespace(o.get("namespace"));
        if (o.containsKey("namespace-v2")) c.setNamespaceV2(o.get("namespace-v2"));
        c.setInstanceName("timer-java-c-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(RefClient.req(o, "topic"), "*");
        AtomicInteger count = new AtomicInteger();
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : msgs) {
                count.incrementAndGet();
                RefClient.print(new RefClient.Json().put("type", "received").put("msgId", m.getMsgId()).put("receiveTime", now)
                    .put("topic", m.getTopic()).put("body", new String(m.getBody(), StandardCharsets.UTF_8))
                    .put("properties", new TreeMap<>(m.getProperties())));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        // Ready once a rebalance gave it the topic's queues: one that ran before the broker knew the
        // heartbeat holds nothing until the next round, 20 s later, so it is asked again meanwhile.
        int want = Integer.parseInt(o.getOrDefault("queues", "2"));
        long deadline = System.currentTimeMillis() + 60_000;
        int held = 0;
        while (System.currentTimeMillis() < deadline) {
            held = 0;
            for (MessageQueue mq : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()) {
                if (!mq.getTopic().startsWith("%RETRY%")) held++;
            }
            if (held >= want) break;
            // the heartbeat has gone by now: rebalance again rather than wait for the 20 s round
            c.getDefaultMQPushConsumerImpl().getmQClientFactory().rebalanceImmediately();
            Thread.sleep(200);
        }
        // A rebalance that changes the queues gives the subscription a new subVersion and sends a
        // heartbeat carrying it, but only if it gets the heartbeat lock (tryLock): when another
        // heartbeat holds it, Java logs "lock heartBeat, but failed" and the broker keeps the old
        // version, so every pull is SUBSCRIPTION_NOT_LATEST until the next heartbeat, 30 s later
        // (seen in CI, on the embedded and the real broker: nothing consumed in 20 s). The process
        // queues are filled a moment before the version changes, in the same rebalance, so a
        // heartbeat sent as soon as they are held may carry the old version (and may itself be what
        // made the rebalance's own heartbeat fail). Send one under the lock (V2 with isRebalance,
        // so that it carries the subscriptions), then again until the versions it carried are the
        // versions the consumer pulls with.
        long sent = -1;
        while (System.currentTimeMillis() < deadline) {
            long version = subVersions(c);
            if (version == sent) break;
            if (c.getDefaultMQPushConsumerImpl().getmQClientFactory().sendHeartbeatToAllBrokerWithLockV2(true)) {
                sent = version;
                Thread.sleep(200); // a rebalance under way ends with its version change in this time
            } else {
                Thread.sleep(50);
            }
        }
        RefClient.print(new RefClient.Json().put("type", "ready").put("queues", held));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            c.shutdown();
            RefClient.print(new RefClient.Json().put("type", "done").put("count", count.get()));
        }));
        Thread.sleep(Long.parseLong(o.getOrDefault("timeout-ms", "60000")));
    }

    /** The subscription versions the consumer pulls with (a change means a rebalance moved its queues). */
    private static long subVersions(DefaultMQPushConsumer c) {
        long sum = 0;
        for (org.apache.rocketmq.remoting.protocol.heartbeat.SubscriptionData sd : c.getDefaultMQPushConsumerImpl().getSubscriptionInner().values()) {
            sum += sd.getSubVersion();
        }
        return sum;
    }

}
