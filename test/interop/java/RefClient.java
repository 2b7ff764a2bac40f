// Reference Java client for rocketwire's interop suite: the stock Apache RocketMQ producer, push
// consumer and admin API driven from the command line, printing one JSON object per line on stdout.
// It compiles unchanged against the 4.9.x and 5.3.x client jars (the admin types moved package
// between them, hence `var` where they appear). Built and run by test/interop/java-client.ts.
//
//   produce       --namesrv A --topic T --count N [--size S] [--tag X] [--keys K] [--props k=v,...]
//                 [--group G] [--queue Q] [--quiet] [--ak AK --sk SK]
//   consume       --namesrv A --topic T --group G [--expect N] [--timeout-ms M] [--from first|last]
//                 [--tag-expr E] [--reconsume-later-first K] [--delay-level L] [--threads N]
//                 [--batch-max N] [--handler-ms MS] [--progress-ms N] [--trace] [--ak --sk]
//                 (--handler-ms: each listener call sleeps MS ms after counting its messages;
//                 --trace: enableMsgTrace, SubBefore/SubAfter records to RMQ_SYS_TRACE_TOPIC)
//   consume-bench the same as consume without the per-message lines; reports msgs/s. With --gate
//                 (one of N processes of a group, `rocketwire bench --consumers N`): prints the held
//                 queues on each change, handles nothing until "go" on stdin, ends at "stop"; the
//                 first 8 bytes of each body are its number (< --expect), reported as a bitmap
//   offsets       --namesrv A --group G [--topic T] [--ak --sk]

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public final class RefClient {
    private static final Object OUT = new Object();

    public static void main(String[] argv) {
        if (argv.length == 0) {
            fail("usage: RefClient produce|consume|consume-bench|offsets [options]");
        }
        Map<String, String> o = parse(argv);
        try {
            switch (argv[0]) {
                case "produce": produce(o); break;
                case "consume": consume(o, false); break;
                case "consume-bench": consume(o, true); break;
                case "offsets": offsets(o); break;
                default: fail("unknown command " + argv[0]);
            }
        } catch (Throwable e) {
            fail(e.getClass().getName() + ": " + e.getMessage());
        }
        // Client threads (netty, schedulers) are not all daemons in every version: exit explicitly.
        System.exit(0);
    }

    // ---- produce ------------------------------------------------------------------------------

    private static void produce(Map<String, String> o) throws Exception {
        String topic = req(o, "topic");
        int count = Integer.parseInt(o.getOrDefault("count", "1"));
        int size = Integer.parseInt(o.getOrDefault("size", "128"));
        boolean quiet = o.containsKey("quiet");
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "ref_producer"), hook(o));
        p.setNamesrvAddr(req(o, "namesrv"));
        p.setInstanceName("ref-" + ProcessHandle.current().pid());
        p.setSendMsgTimeout(10000);
        p.setRetryTimesWhenSendFailed(2);
        p.start();
        Map<String, String> props = parseProps(o.get("props"));
        String queueOpt = o.get("queue");
        long start = System.currentTimeMillis();
        int failed = 0;
        List<MessageQueue> queues = null;
        if (queueOpt != null) {
            queues = p.fetchPublishMessageQueues(topic);
        }
        for (int i = 0; i < count; i++) {
            byte[] body = body(i, size);
            Message m = new Message(topic, body);
            if (o.containsKey("tag")) m.setTags(o.get("tag"));
            if (o.containsKey("keys")) m.setKeys(o.get("keys").replace("{i}", Integer.toString(i)));
            for (Map.Entry<String, String> e : props.entrySet()) m.putUserProperty(e.getKey(), e.getValue());
            try {
                SendResult r;
                if (queues != null) {
                    int q = Integer.parseInt(queueOpt);
                    MessageQueue target = null;
                    for (MessageQueue mq : queues) if (mq.getQueueId() == q) { target = mq; break; }
                    if (target == null) throw new IllegalArgumentException("no queue " + q + " in " + queues);
                    r = p.send(m, target);
                } else {
                    r = p.send(m);
                }
                if (!quiet) {
                    Json j = new Json().put("type", "sent").put("i", i).put("status", r.getSendStatus().name())
                        .put("msgId", r.getMsgId()).put("offsetMsgId", r.getOffsetMsgId())
                        .put("brokerName", r.getMessageQueue().getBrokerName())
                        .put("queueId", r.getMessageQueue().getQueueId()).put("queueOffset", r.getQueueOffset())
                        .put("bodyLength", body.length).put("bodySha1", sha1(body));
                    print(j);
                }
            } catch (Exception e) {
                failed++;
                print(new Json().put("type", "error").put("i", i).put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
            }
        }
        long elapsed = System.currentTimeMillis() - start;
        p.shutdown();
        print(new Json().put("type", "summary").put("sent", count - failed).put("failed", failed)
            .put("elapsedMs", elapsed).put("msgsPerSec", elapsed > 0 ? (count - failed) * 1000.0 / elapsed : 0));
        if (failed > 0) System.exit(1);
    }

    /** Body i: "<i>:" followed by a repeating printable pattern, so bodies are distinct, checkable and compressible. */
    static byte[] body(int i, int size) {
        byte[] b = new byte[size];
        byte[] head = (i + ":").getBytes(StandardCharsets.US_ASCII);
        for (int k = 0; k < size; k++) {
            b[k] = k < head.length ? head[k] : (byte) ('a' + ((k * 7 + i) % 26));
        }
        return b;
    }

    // ---- consume --------------------------------------------------------------------------------

    private static void consume(Map<String, String> o, boolean bench) throws Exception {
        String topic = req(o, "topic");
        String group = req(o, "group");
        long expect = Long.parseLong(o.getOrDefault("expect", "0"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "30000"));
        long failFirst = Long.parseLong(o.getOrDefault("reconsume-later-first", "0"));
        int delayLevel = Integer.parseInt(o.getOrDefault("delay-level", "0"));
        // --trace: enableMsgTrace, records to RMQ_SYS_TRACE_TOPIC (the bench's java-trace peer)
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, hook(o), new AllocateMessageQueueAveragely(), o.containsKey("trace"), null);
        c.setNamesrvAddr(req(o, "namesrv"));
        healHeartbeatRace(c);
        c.setInstanceName("ref-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere("last".equals(o.get("from"))
            ? ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET : ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        if (o.containsKey("threads")) {
            int n = Integer.parseInt(o.get("threads"));
            c.setConsumeThreadMin(n);
            c.setConsumeThreadMax(n);
        }
        if (o.containsKey("batch-max")) c.setConsumeMessageBatchMaxSize(Integer.parseInt(o.get("batch-max")));
        long handlerMs = Long.parseLong(o.getOrDefault("handler-ms", "0"));
        // --topic A,B,…: one subscription per topic (topic names never hold a comma)
        for (String one : topic.split(",")) c.subscribe(one, o.getOrDefault("tag-expr", "*"));
        AtomicLong succeeded = new AtomicLong();
        AtomicLong sleptNs = new AtomicLong();
        AtomicLong sleeps = new AtomicLong();
        AtomicLong later = new AtomicLong();
        AtomicLong firstAt = new AtomicLong();
        AtomicLong lastAt = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        boolean gate = o.containsKey("gate");
        CountDownLatch go = new CountDownLatch(gate ? 1 : 0);
        AtomicIntegerArray seen = new AtomicIntegerArray(gate ? (int) expect : 0);
        AtomicLong unique = new AtomicLong();
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            if (gate) {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
            }
            for (MessageExt m : msgs) {
                // The first K first-time deliveries are answered RECONSUME_LATER (retry path tests).
                boolean fail = failFirst > 0 && m.getReconsumeTimes() == 0 && later.incrementAndGet() <= failFirst;
                if (!bench) {
                    print(describe(m).put("type", "msg").put("status", fail ? "RECONSUME_LATER" : "CONSUME_SUCCESS"));
                }
                if (fail) {
                    if (delayLevel > 0) ctx.setDelayLevelWhenNextConsume(delayLevel);
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
                long now = System.currentTimeMillis();
                firstAt.compareAndSet(0, now);
                lastAt.set(now);
                if (gate) {
                    byte[] b = m.getBody();
                    long idx = b.length >= 8 ? java.nio.ByteBuffer.wrap(b).getLong() : -1;
                    if (idx < 0 || idx >= expect) continue;
                    if (seen.getAndSet((int) idx, 1) == 0) unique.incrementAndGet();
                    succeeded.incrementAndGet();
                } else if (succeeded.incrementAndGet() == expect) done.countDown();
            }
            if (handlerMs > 0) {
                long t = System.nanoTime();
                try {
                    Thread.sleep(handlerMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                sleptNs.addAndGet(System.nanoTime() - t);
                sleeps.incrementAndGet();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long start = System.currentTimeMillis();
        c.start();
        print(new Json().put("type", "started").put("group", group).put("topic", topic));
        // --progress-ms N: a {"type":"progress","received","ts"} line every N ms (the benchmark plots them).
        long progressMs = Long.parseLong(o.getOrDefault("progress-ms", "0"));
        ScheduledExecutorService progress = null;
        if (progressMs > 0) {
            progress = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread th = new Thread(r, "ref-progress");
                th.setDaemon(true);
                return th;
            });
            progress.scheduleAtFixedRate(
                () -> print(new Json().put("type", "progress").put("received", succeeded.get()).put("unique", unique.get()).put("ts", System.currentTimeMillis())),
                progressMs, progressMs, TimeUnit.MILLISECONDS);
        }
        ScheduledExecutorService watch = null;
        if (gate) {
            watch = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread th = new Thread(r, "ref-assignment");
                th.setDaemon(true);
                return th;
            });
            String[] held = { null };
            watch.scheduleAtFixedRate(() -> {
                List<String> queues = new ArrayList<>();
                for (Map.Entry<MessageQueue, ProcessQueue> e : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().entrySet()) {
                    if (e.getKey().getTopic().equals(topic) && !e.getValue().isDropped()) queues.add(e.getKey().getBrokerName() + ":" + e.getKey().getQueueId());
                }
                java.util.Collections.sort(queues);
                String key = String.join(",", queues);
                if (!key.equals(held[0])) {
                    held[0] = key;
                    print(new Json().put("type", "assignment").put("queues", queues));
                }
            }, 20, 20, TimeUnit.MILLISECONDS);
            Thread in = new Thread(() -> {
                try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        if (line.trim().equals("go")) go.countDown();
                        else if (line.trim().equals("stop")) break;
                    }
                } catch (java.io.IOException e) {
                    // The end of stdin is a stop too.
                }
                go.countDown();
                done.countDown();
            }, "ref-stdin");
            in.setDaemon(true);
            in.start();
        }
        boolean ok = expect > 0 || gate ? done.await(timeoutMs, TimeUnit.MILLISECONDS) : sleep(timeoutMs);
        if (watch != null) watch.shutdownNow();
        if (progress != null) progress.shutdownNow();
        // shutdown() persists the consumed offsets to the broker, so `offsets` sees them afterwards.
        // The latch fires inside the listener, before the client has advanced the queue's offset past
        // that message (processConsumeResult runs after the listener returns, and removes the message
        // from the process queue before it updates the offset): with the default await of 0 the
        // persist could run first and miss the last batch. Waiting for the consume threads makes
        // shutdown persist after every result was processed.
        c.setAwaitTerminationMillisWhenShutdown(10_000);
        c.shutdown();
        long n = succeeded.get();
        Json s = new Json().put("type", bench ? "bench" : "summary").put("received", n)
            .put("reconsumeLater", Math.min(later.get(), failFirst)).put("expected", expect).put("complete", ok)
            .put("startTs", start).put("firstTs", firstAt.get()).put("lastTs", lastAt.get())
            .put("elapsedMs", lastAt.get() > 0 ? lastAt.get() - firstAt.get() : 0);
        if (gate) {
            byte[] bits = new byte[(int) ((expect + 7) / 8)];
            for (int i = 0; i < expect; i++) if (seen.get(i) != 0) bits[i >> 3] |= (byte) (1 << (i & 7));
            s.put("unique", unique.get()).put("seen", Base64.getEncoder().encodeToString(bits));
        }
        if (bench) {
            long span = lastAt.get() - firstAt.get();
            s.put("msgsPerSec", span > 0 ? (n - 1) * 1000.0 / span : 0);
            // How long the --handler-ms sleeps really took: Little's law's ceiling is threads / this.
            if (sleeps.get() > 0) s.put("handlerMeanMs", sleptNs.get() / 1e6 / sleeps.get());
        }
        print(s);
        if (!ok) System.exit(3);
    }


    static boolean sleep(long ms) throws InterruptedException {
        Thread.sleep(ms);
        return true;
    }

    /** "127.0.0.1:port" of a store host (the master that stored the message, slaves copy it as is). */
    static String hostPort(java.net.SocketAddress a) {
        if (!(a instanceof java.net.InetSocketAddress)) return String.valueOf(a);
        java.net.InetSocketAddress i = (java.net.InetSocketAddress) a;
        return i.getAddress().getHostAddress() + ":" + i.getPort();
    }

    static Json describe(MessageExt m) {
        Map<String, String> props = new TreeMap<>(m.getProperties());
        byte[] body = m.getBody();
        Json j = new Json().put("topic", m.getTopic()).put("queueId", m.getQueueId())
            .put("storeHost", hostPort(m.getStoreHost()))
            .put("queueOffset", m.getQueueOffset()).put("commitLogOffset", m.getCommitLogOffset())
            .put("msgId", m.getMsgId()).put("offsetMsgId", m instanceof MessageClientExt ? ((MessageClientExt) m).getOffsetMsgId() : null)
            .put("tags", m.getTags()).put("keys", m.getKeys()).put("properties", props)
            .put("reconsumeTimes", m.getReconsumeTimes()).put("sysFlag", m.getSysFlag())
            .put("bornTimestamp", m.getBornTimestamp()).put("storeTimestamp", m.getStoreTimestamp())
            .put("bodyLength", body.length).put("bodySha1", sha1(body));
        if (body.length <= 1024) j.put("body", Base64.getEncoder().encodeToString(body));
        return j;
    }

    // ---- offsets --------------------------------------------------------------------------------

    private static void offsets(Map<String, String> o) throws Exception {
        String group = req(o, "group");
        String topic = o.get("topic");
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook(o));
        admin.setNamesrvAddr(req(o, "namesrv"));
        admin.setInstanceName("ref-admin-" + ProcessHandle.current().pid());
        admin.start();
        List<Json> queues = new ArrayList<>();
        long diff = 0;
        String error = null;
        try {
            var stats = admin.examineConsumeStats(group);
            for (var e : stats.getOffsetTable().entrySet()) {
                MessageQueue mq = e.getKey();
                if (topic != null && !topic.equals(mq.getTopic())) continue;
                long b = e.getValue().getBrokerOffset();
                long c = e.getValue().getConsumerOffset();
                diff += b - c;
                queues.add(new Json().put("topic", mq.getTopic()).put("brokerName", mq.getBrokerName())
                    .put("queueId", mq.getQueueId()).put("brokerOffset", b).put("consumerOffset", c));
            }
        } catch (Exception e) {
            // Thrown when the group has no committed offset at all, which is an answer, not a failure.
            error = e.getMessage();
        }
        admin.shutdown();
        queues.sort((a, b) -> a.sortKey().compareTo(b.sortKey()));
        Json j = new Json().put("type", "offsets").put("group", group).put("queues", queues).put("diffTotal", diff);
        if (error != null) j.put("error", error);
        print(j);
    }

    // ---- helpers --------------------------------------------------------------------------------

    /**
     * A consumer whose rebalance moves its queues gives the subscription a new subVersion and sends
     * a heartbeat carrying it, but only if it wins the heartbeat lock with tryLock; when the periodic
     * or start-up heartbeat holds it, Java logs "lock heartBeat, but failed", the broker keeps the old
     * version and answers every pull SUBSCRIPTION_NOT_LATEST until the next periodic heartbeat, 30 s
     * later (seen in CI on the embedded and the real broker, at start and at later rebalances). A 1 s
     * heartbeat bounds that stall to about the 3 s pull back-off. Nothing the tests check depends on
     * the interval.
     */
    static void healHeartbeatRace(org.apache.rocketmq.client.ClientConfig c) {
        c.setHeartbeatBrokerInterval(1000);
    }

    static RPCHook hook(Map<String, String> o) {
        if (!o.containsKey("ak")) return null;
        return new AclClientRPCHook(new SessionCredentials(o.get("ak"), req(o, "sk")));
    }

    static Map<String, String> parse(String[] argv) {
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--")) fail("unexpected argument " + a);
            String k = a.substring(2);
            if (k.equals("quiet") || k.equals("gate") || k.equals("trace")) { o.put(k, "true"); continue; }
            if (i + 1 >= argv.length) fail("missing value for " + a);
            o.put(k, argv[++i]);
        }
        return o;
    }

    static Map<String, String> parseProps(String s) {
        Map<String, String> m = new TreeMap<>();
        if (s == null || s.isEmpty()) return m;
        for (String kv : s.split(",")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) fail("bad --props entry " + kv);
            m.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return m;
    }

    static String req(Map<String, String> o, String k) {
        String v = o.get(k);
        if (v == null) fail("missing --" + k);
        return v;
    }

    static String sha1(byte[] b) {
        try {
            StringBuilder sb = new StringBuilder();
            for (byte x : MessageDigest.getInstance("SHA-1").digest(b)) sb.append(String.format("%02x", x));
            return sb.toString();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static void print(Json j) {
        synchronized (OUT) {
            System.out.println(j);
            System.out.flush();
        }
    }

    static void fail(String msg) {
        synchronized (OUT) {
            System.out.println(new Json().put("type", "fatal").put("error", msg));
            System.out.flush();
        }
        System.exit(2);
    }

    /** A JSON object writer: insertion-ordered keys; values are String, Number, Boolean, Map, List, Json or null. */
    static final class Json {
        private final StringBuilder sb = new StringBuilder("{");
        private String sortKey = "";

        Json put(String k, Object v) {
            if (sb.length() > 1) sb.append(',');
            str(sb, k);
            sb.append(':');
            value(sb, v);
            if (k.equals("topic") || k.equals("brokerName") || k.equals("queueId")) {
                sortKey += (v instanceof Integer ? String.format("%08d", v) : String.valueOf(v)) + "/";
            }
            return this;
        }

        String sortKey() {
            return sortKey;
        }

        @Override
        public String toString() {
            return sb.toString() + "}";
        }

        private static void value(StringBuilder sb, Object v) {
            if (v == null) {
                sb.append("null");
            } else if (v instanceof Json) {
                sb.append(v.toString());
            } else if (v instanceof Number || v instanceof Boolean) {
                sb.append(v);
            } else if (v instanceof Map) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) sb.append(',');
                    first = false;
                    str(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    value(sb, e.getValue());
                }
                sb.append('}');
            } else if (v instanceof List) {
                sb.append('[');
                boolean first = true;
                for (Object x : (List<?>) v) {
                    if (!first) sb.append(',');
                    first = false;
                    value(sb, x);
                }
                sb.append(']');
            } else {
                str(sb, v.toString());
            }
        }

        private static void str(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char ch = s.charAt(i);
                switch (ch) {
                    case '"': sb.append("\\\""); break;
                    case '\\': sb.append("\\\\"); break;
                    case '\n': sb.append("\\n"); break;
                    case '\r': sb.append("\\r"); break;
                    case '\t': sb.append("\\t"); break;
                    default:
                        if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch));
                        else sb.append(ch);
                }
            }
            sb.append('"');
        }
    }
}
