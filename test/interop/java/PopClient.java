import java.util.Map;
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
 */
public final class PopClient {
    public static void main(String[] argv) {
        if (argv.length == 0) RefClient.fail("usage: PopClient set-mode|pop-consume [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "set-mode": setMode(o); break;
                case "pop-consume": popConsume(o); break;
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
}
