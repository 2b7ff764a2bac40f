import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * The Java peer of rocketwire's POP consumer: Java 5.x's DefaultMQPushConsumer in pop mode.
 *
 *   set-mode --namesrv H:P --broker H:P --topic T --group G --mode POP|PULL [--share N]
 *       what `mqadmin setConsumeMode` sends (SET_MESSAGE_REQUEST_MODE via DefaultMQAdminExt)
 *   pop-consume --namesrv H:P --topic T --group G [--expect N] [--timeout-ms MS] [--invisible-ms MS]
 *       a DefaultMQPushConsumer with clientRebalance=false: once the broker says POP for the
 *       group (QUERY_ASSIGNMENT), it pops, acks on CONSUME_SUCCESS; prints one line per message
 *       with its POP_CK, then a summary when --expect messages were consumed or the time is up
 *   pop-bench --namesrv H:P --topic T --group G --expect N [--timeout-ms MS] [--progress-ms MS]
 *       the peer "java-pop" of `rocketwire bench --vs java-pop`: switches G to POP on every master
 *       of T's route (as set-mode), then pop-consume with Java's defaults (popBatchNums 32,
 *       popThresholdForQueue 96, 20 consume threads) and no per-message lines; the first 8 bytes
 *       of each body are its number (< N); a {"type":"progress","received","ts"} line every
 *       --progress-ms and {"type":"bench","received","firstTs","lastTs","complete"} once N
 *       distinct messages were consumed, counted as RefClient consume-bench counts (first to last)
 */
public final class PopClient {
    public static void main(String[] argv) {
        if (argv.length == 0) RefClient.fail("usage: PopClient set-mode|pop-consume [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "set-mode": setMode(o); break;
                case "pop-consume": popConsume(o); break;
                case "pop-bench": popBench(o); break;
                default: RefClient.fail("unknown command " + argv[0]);
            }
        } catch (Throwable e) {
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage());
        }
        System.exit(0);
    }

    private static void setMode(Map<String, String> o) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(RefClient.hook(o), 5000);
        admin.setNamesrvAddr(RefClient.req(o, "namesrv"));
        admin.setInstanceName("pop-admin-" + ProcessHandle.current().pid());
        admin.start();
        try {
            MessageRequestMode mode = MessageRequestMode.valueOf(RefClient.req(o, "mode"));
            int share = Integer.parseInt(o.getOrDefault("share", "-1"));
            for (String broker : RefClient.req(o, "broker").split(",")) {
                admin.setMessageRequestMode(broker, RefClient.req(o, "topic"), RefClient.req(o, "group"), mode, share, 5000);
            }
            RefClient.print(new RefClient.Json().put("type", "mode-set").put("mode", mode.name()));
        } finally {
            admin.shutdown();
        }
    }

    private static void popConsume(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        String group = RefClient.req(o, "group");
        long expect = Long.parseLong(o.getOrDefault("expect", "0"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "30000"));
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, RefClient.hook(o), new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        c.setInstanceName("pop-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setClientRebalance(false);
        if (o.containsKey("invisible-ms")) c.setPopInvisibleTime(Long.parseLong(o.get("invisible-ms")));
        c.subscribe(topic, o.getOrDefault("tag-expr", "*"));
        AtomicLong consumed = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                RefClient.print(RefClient.describe(m).put("type", "msg").put("popCk", m.getProperty("POP_CK")));
                if (consumed.incrementAndGet() == expect) done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long start = System.currentTimeMillis();
        c.start();
        RefClient.print(new RefClient.Json().put("type", "started"));
        done.await(timeoutMs, TimeUnit.MILLISECONDS);
        // let the last acks go out before the summary
        Thread.sleep(500);
        RefClient.print(new RefClient.Json().put("type", "summary").put("consumed", consumed.get())
            .put("elapsedMs", System.currentTimeMillis() - start));
        c.shutdown();
    }

    private static void popBench(Map<String, String> o) throws Exception {
        String namesrv = RefClient.req(o, "namesrv");
        String topic = RefClient.req(o, "topic");
        String group = RefClient.req(o, "group");
        int expect = Integer.parseInt(RefClient.req(o, "expect"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "120000"));
        long progressMs = Long.parseLong(o.getOrDefault("progress-ms", "0"));
        // A new group is PULL until told otherwise: switch it on every master, as mqadmin setConsumeMode does.
        DefaultMQAdminExt admin = new DefaultMQAdminExt(RefClient.hook(o), 5000);
        admin.setNamesrvAddr(namesrv);
        admin.setInstanceName("pop-bench-admin-" + ProcessHandle.current().pid());
        admin.start();
        try {
            TopicRouteData route = admin.examineTopicRouteInfo(topic);
            for (BrokerData b : route.getBrokerDatas()) {
                String master = b.getBrokerAddrs().get(0L);
                if (master != null) admin.setMessageRequestMode(master, topic, group, MessageRequestMode.POP, -1, 5000);
            }
        } finally {
            admin.shutdown();
        }
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, RefClient.hook(o), new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(namesrv);
        RefClient.healHeartbeatRace(c);
        c.setInstanceName("pop-bench-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setClientRebalance(false);
        c.subscribe(topic, "*");
        AtomicIntegerArray seen = new AtomicIntegerArray(expect);
        AtomicLong unique = new AtomicLong();
        AtomicLong firstAt = new AtomicLong();
        AtomicLong lastAt = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                byte[] b = m.getBody();
                long idx = b.length >= 8 ? java.nio.ByteBuffer.wrap(b).getLong() : -1;
                if (idx < 0 || idx >= expect || seen.getAndSet((int) idx, 1) != 0) continue;
                long now = System.currentTimeMillis();
                firstAt.compareAndSet(0, now);
                lastAt.set(now);
                if (unique.incrementAndGet() == expect) done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        RefClient.print(new RefClient.Json().put("type", "started").put("group", group).put("topic", topic));
        ScheduledExecutorService progress = null;
        if (progressMs > 0) {
            progress = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread th = new Thread(r, "pop-progress");
                th.setDaemon(true);
                return th;
            });
            progress.scheduleAtFixedRate(
                () -> RefClient.print(new RefClient.Json().put("type", "progress").put("received", unique.get()).put("ts", System.currentTimeMillis())),
                progressMs, progressMs, TimeUnit.MILLISECONDS);
        }
        boolean ok = done.await(timeoutMs, TimeUnit.MILLISECONDS);
        if (progress != null) progress.shutdownNow();
        c.shutdown();
        RefClient.print(new RefClient.Json().put("type", "bench").put("received", unique.get()).put("firstTs", firstAt.get())
            .put("lastTs", lastAt.get()).put("complete", ok));
    }
}
