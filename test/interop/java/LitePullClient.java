// Java's DefaultLitePullConsumer for rocketwire's interop suite (5.x only), JSON lines on stdout as
// RefClient prints them. Run by test/interop/java-lite-pull.ts.
//
//   subscribe  --namesrv A --topic T --group G [--from first|last] [--timeout-ms M]
//              subscribe mode (the group's rebalance): prints {"type":"started"}, then an
//              {"type":"assignment","queues":["broker:id",...]} line whenever its share changes and a
//              "msg" line per polled message; commitSync() after every poll. On SIGTERM (or after
//              --timeout-ms) it stops polling, commits, shuts down (which persists the offsets to the
//              broker) and prints {"type":"summary","received":N}.
//   subscribe-bench  the same with autoCommit (Java's default) and no per-message lines, for
//              `rocketwire bench --mode lite --vs java-lite`: --expect N (the first 8 bytes of each
//              body are its number), a {"type":"progress","received","ts"} line every --progress-ms,
//              and {"type":"bench","received","firstTs","lastTs","complete"} once N distinct arrived.

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.Map;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

public final class LitePullClient {
    public static void main(String[] argv) {
        if (argv.length == 0) RefClient.fail("usage: LitePullClient subscribe [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "subscribe": subscribe(o); break;
                case "subscribe-bench": bench(o); break;
                default: RefClient.fail("unknown command " + argv[0]);
            }
        } catch (Throwable e) {
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage());
        }
        System.exit(0);
    }

    private static void subscribe(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        String group = RefClient.req(o, "group");
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "120000"));
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group, RefClient.hook(o));
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        c.setInstanceName("lite-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere("last".equals(o.get("from"))
            ? ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET : ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommit(false);
        c.subscribe(topic, o.getOrDefault("tag-expr", "*"));
        c.start();
        RefClient.print(new RefClient.Json().put("type", "started").put("group", group).put("topic", topic));
        AtomicBoolean stopping = new AtomicBoolean();
        AtomicLong received = new AtomicLong();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread loop = new Thread(() -> {
            String held = null;
            long end = System.currentTimeMillis() + timeoutMs;
            try {
                while (!stopping.get() && System.currentTimeMillis() < end) {
                    List<MessageExt> msgs = c.poll(200);
                    for (MessageExt m : msgs) {
                        received.incrementAndGet();
                        RefClient.print(RefClient.describe(m).put("type", "msg"));
                    }
                    if (!msgs.isEmpty()) c.commitSync();
                    List<String> queues = new ArrayList<>();
                    for (MessageQueue mq : c.assignment()) {
                        if (mq.getTopic().equals(topic)) queues.add(mq.getBrokerName() + ":" + mq.getQueueId());
                    }
                    Collections.sort(queues);
                    String key = String.join(",", queues);
                    if (!key.equals(held)) {
                        held = key;
                        RefClient.print(new RefClient.Json().put("type", "assignment").put("queues", queues));
                    }
                }
            } catch (Throwable e) {
                RefClient.print(new RefClient.Json().put("type", "error").put("error", e.toString()));
            } finally {
                stopped.countDown();
            }
        }, "lite-poll");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping.set(true);
            try {
                stopped.await();
            } catch (InterruptedException e) {
                return;
            }
            finish(c, received.get());
        }, "lite-stop"));
        loop.start();
        loop.join();
        if (!stopping.get()) {
            stopping.set(true);
            finish(c, received.get());
        }
    }

    private static void bench(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        int expect = Integer.parseInt(RefClient.req(o, "expect"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "120000"));
        long progressMs = Long.parseLong(o.getOrDefault("progress-ms", "0"));
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(RefClient.req(o, "group"), RefClient.hook(o));
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        c.setInstanceName("lite-bench-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.start();
        boolean[] seen = new boolean[expect];
        long unique = 0;
        long firstTs = 0;
        long lastTs = 0;
        long end = System.currentTimeMillis() + timeoutMs;
        long nextProgress = System.currentTimeMillis() + progressMs;
        while (unique < expect && System.currentTimeMillis() < end) {
            for (MessageExt m : c.poll(100)) {
                byte[] b = m.getBody();
                long idx = b.length >= 8 ? java.nio.ByteBuffer.wrap(b).getLong() : -1;
                if (idx < 0 || idx >= expect || seen[(int) idx]) continue;
                seen[(int) idx] = true;
                unique++;
                lastTs = System.currentTimeMillis();
                if (firstTs == 0) firstTs = lastTs;
            }
            if (progressMs > 0 && System.currentTimeMillis() >= nextProgress) {
                RefClient.print(new RefClient.Json().put("type", "progress").put("received", unique).put("ts", System.currentTimeMillis()));
                nextProgress += progressMs;
            }
        }
        c.shutdown();
        RefClient.print(new RefClient.Json().put("type", "bench").put("received", unique).put("firstTs", firstTs)
            .put("lastTs", lastTs).put("complete", unique == expect));
    }

    private static synchronized void finish(DefaultLitePullConsumer c, long received) {
        if (!c.isRunning()) return;
        // commitSync() only updates the in-memory offsets; shutdown() persists them to the broker.
        c.commitSync();
        c.shutdown();
        RefClient.print(new RefClient.Json().put("type", "summary").put("received", received));
    }
}
