// The Java side of `rocketwire bench --latency`: Apache RocketMQ's DefaultMQPushConsumer and
// DefaultMQProducer (their defaults) in long-lived processes driven by commands on stdin, printing
// one JSON object per line on stdout. Compiled beside RefClient.java (it uses its Json and parse).
//
//   LatencyBench consume --namesrv A --topic T --group G [--wait true]
//   LatencyBench produce --namesrv A --topic T [--size S] [--threads N]
//
// A body is: phase (4 bytes), sequence in the phase (4), the send time the producer scheduled for
// it in microseconds since the epoch (8, big-endian), then filler. Every process runs on one host,
// so a consumer's Instant.now() minus that time is the message's latency from its scheduled send.
//
// Commands (one a line): consumer: `begin N` (start phase N's resource figures), `count N` (how many
// messages of phase N were handled), `end N` (phase N's latency percentiles and GC), `trace N` (keep
// every message of phase N), `dump N FILE` (write them to FILE: due µs and handled µs as doubles,
// queue id and sequence as ints, 24 bytes each, big-endian; bench/harness/latency-record.ts reads
// them), `start` (with --wait: the consumer starts only then, a member joining), `quit`.
// Producer: `run N RATE MS` (open loop: message i of phase N is due at start + i / RATE, sent by
// one of the pool's threads with the blocking send(msg); answers when every send was answered),
// `quit`. Latencies are recorded in a log histogram of 1000 buckets a decade (0.23 % apart).

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class LatencyBench {
    /** Log-bucketed latency recorder in ms: 1000 buckets a decade from 1 µs. */
    static final class Histogram {
        private static final int SUB = 1000;
        private final long[] counts = new long[SUB * 10 + 2];
        private long n;
        private double max;
        private double sum;

        synchronized void record(double ms) {
            if (!(ms >= 0)) ms = 0;
            n++;
            sum += ms;
            if (ms > max) max = ms;
            int i = ms < 1e-3 ? 0 : (int) Math.min(counts.length - 1, Math.floor((Math.log10(ms) + 3) * SUB) + 1);
            counts[i]++;
        }

        synchronized long count() {
            return n;
        }

        private double percentile(double p) {
            if (n == 0) return 0;
            long rank = Math.max(1, (long) Math.ceil(p / 100 * n));
            long seen = 0;
            for (int i = 0; i < counts.length; i++) {
                seen += counts[i];
                if (seen >= rank) return Math.min(i == 0 ? 1e-3 : Math.pow(10, (double) i / SUB - 3), max);
            }
            return max;
        }

        synchronized RefClient.Json json() {
            return new RefClient.Json().put("count", n).put("p50", percentile(50)).put("p99", percentile(99))
                .put("p999", percentile(99.9)).put("max", max).put("mean", n == 0 ? 0 : sum / n);
        }
    }

    /** GC collections and their total time so far, over every collector of this JVM. */
    static long[] gc() {
        long count = 0, ms = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, b.getCollectionCount());
            ms += Math.max(0, b.getCollectionTime());
        }
        return new long[] {count, ms};
    }

    static double nowUs() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000.0 + t.getNano() / 1000.0;
    }

    static void print(RefClient.Json j) {
        RefClient.print(j);
    }

    /** Every message of a traced phase: due and handled µs, queue, sequence. */
    static final class SampleLog {
        private double[] sent = new double[4096];
        private double[] handled = new double[4096];
        private int[] queue = new int[4096];
        private int[] seq = new int[4096];
        private int n;

        synchronized void add(double sentUs, double handledUs, int queueId, int s) {
            if (n == sent.length) {
                sent = java.util.Arrays.copyOf(sent, n * 2);
                handled = java.util.Arrays.copyOf(handled, n * 2);
                queue = java.util.Arrays.copyOf(queue, n * 2);
                seq = java.util.Arrays.copyOf(seq, n * 2);
            }
            sent[n] = sentUs;
            handled[n] = handledUs;
            queue[n] = queueId;
            seq[n] = s;
            n++;
        }

        synchronized int write(String file) throws java.io.IOException {
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(file)))) {
                for (int i = 0; i < n; i++) {
                    out.writeDouble(sent[i]);
                    out.writeDouble(handled[i]);
                    out.writeInt(queue[i]);
                    out.writeInt(seq[i]);
                }
            }
            return n;
        }
    }

    // ---- consumer ------------------------------------------------------------------------------

    static final class Phase {
        final Histogram send = new Histogram();
        final Histogram store = new Histogram();
        long[] gc0 = gc();
    }

    private static void consume(Map<String, String> o) throws Exception {
        Map<Integer, Phase> phases = new ConcurrentHashMap<>();
        Map<Integer, SampleLog> traced = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(RefClient.req(o, "group"));
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        c.setInstanceName("latency-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        c.subscribe(RefClient.req(o, "topic"), "*");
        AtomicBoolean first = new AtomicBoolean(true);
        long[] startNs = new long[1];
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            double now = nowUs();
            for (MessageExt m : msgs) {
                byte[] b = m.getBody();
                if (b.length < 16) continue;
                ByteBuffer bb = ByteBuffer.wrap(b);
                int phase = bb.getInt(0);
                long sentUs = bb.getLong(8);
                Phase p = phases.computeIfAbsent(phase, k -> new Phase());
                p.send.record((now - sentUs) / 1000.0);
                p.store.record(now / 1000.0 - m.getStoreTimestamp());
                SampleLog log = traced.get(phase);
                if (log != null) log.add(sentUs, now, m.getQueueId(), bb.getInt(4));
            }
            if (first.getAndSet(false)) {
                print(new RefClient.Json().put("type", "first").put("startupMs", (System.nanoTime() - startNs[0]) / 1e6));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        boolean wait = "true".equals(o.get("wait"));
        boolean started = false;
        if (wait) print(new RefClient.Json().put("type", "idle"));
        else {
            startNs[0] = System.nanoTime();
            c.start();
            started = true;
            print(new RefClient.Json().put("type", "ready").put("startMs", (System.nanoTime() - startNs[0]) / 1e6));
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("quit")) break;
            if (w[0].equals("start") && !started) {
                startNs[0] = System.nanoTime();
                c.start();
                started = true;
                print(new RefClient.Json().put("type", "ready").put("startMs", (System.nanoTime() - startNs[0]) / 1e6));
                continue;
            }
            if (w.length < 2) continue;
            if (w[0].equals("trace")) {
                traced.put(Integer.parseInt(w[1]), new SampleLog());
                continue;
            }
            if (w[0].equals("dump") && w.length >= 3) {
                int ph = Integer.parseInt(w[1]);
                SampleLog log = traced.remove(ph);
                int n = log == null ? new SampleLog().write(w[2]) : log.write(w[2]);
                print(new RefClient.Json().put("type", "dumped").put("phase", ph).put("count", n));
                continue;
            }
            int n = Integer.parseInt(w[1]);
            Phase p = phases.computeIfAbsent(n, k -> new Phase());
            switch (w[0]) {
                case "begin": p.gc0 = gc(); break;
                case "count": print(new RefClient.Json().put("type", "count").put("phase", n).put("count", p.send.count())); break;
                case "end": {
                    long[] g = gc();
                    print(new RefClient.Json().put("type", "phase").put("phase", n).put("count", p.send.count())
                        .put("send", p.send.json()).put("store", p.store.json())
                        .put("gcCount", g[0] - p.gc0[0]).put("gcMs", (double) (g[1] - p.gc0[1])));
                    break;
                }
                default: break;
            }
        }
        if (started) c.shutdown();
    }

    // ---- producer ------------------------------------------------------------------------------

    private static void produce(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        int size = Math.max(16, Integer.parseInt(o.getOrDefault("size", "1024")));
        int threads = Integer.parseInt(o.getOrDefault("threads", "64"));
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "java_latency_producer"));
        p.setNamesrvAddr(RefClient.req(o, "namesrv"));
        p.setInstanceName("latency-producer-" + ProcessHandle.current().pid());
        p.start();
        byte[] template = new byte[size];
        byte[] fill = "rocketwire-bench-".getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < size; i++) template[i] = fill[i % fill.length];
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        print(new RefClient.Json().put("type", "ready"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("quit")) break;
            if (!w[0].equals("run") || w.length < 4) continue;
            int phase = Integer.parseInt(w[1]);
            double rate = Double.parseDouble(w[2]);
            long ms = Long.parseLong(w[3]);
            int total = (int) Math.max(1, Math.round(rate * ms / 1000.0));
            Histogram ack = new Histogram();
            Histogram call = new Histogram();
            Histogram lag = new Histogram();
            AtomicLong failed = new AtomicLong();
            CountDownLatch done = new CountDownLatch(total);
            long[] g0 = gc();
            long startNs = System.nanoTime();
            double startUs = nowUs();
            double intervalUs = 1e6 / rate;
            for (int i = 0; i < total; i++) {
                long dueNs = startNs + (long) (i * intervalUs * 1000);
                for (long wait; (wait = dueNs - System.nanoTime()) > 0; ) LockSupport.parkNanos(wait);
                double dueUs = startUs + i * intervalUs;
                int seq = i;
                pool.execute(() -> {
                    byte[] b = template.clone();
                    ByteBuffer.wrap(b).putInt(0, phase).putInt(4, seq).putLong(8, (long) dueUs);
                    Message m = new Message(topic, b);
                    m.setTags("bench");
                    double callUs = nowUs();
                    try {
                        SendResult r = p.send(m);
                        double now = nowUs();
                        if (r.getSendStatus() == SendStatus.SEND_OK) {
                            ack.record((now - dueUs) / 1000.0);
                            call.record((now - callUs) / 1000.0);
                            lag.record((callUs - dueUs) / 1000.0);
                        } else failed.incrementAndGet();
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    } finally {
                        done.countDown();
                    }
                });
            }
            done.await(60, TimeUnit.SECONDS);
            long[] g = gc();
            print(new RefClient.Json().put("type", "phase").put("phase", phase).put("scheduled", total)
                .put("acked", ack.count()).put("failed", failed.get())
                .put("ack", ack.json()).put("call", call.json()).put("lag", lag.json())
                .put("gcCount", g[0] - g0[0]).put("gcMs", (double) (g[1] - g0[1])));
        }
        pool.shutdownNow();
        p.shutdown();
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) RefClient.fail("usage: LatencyBench consume|produce --namesrv A --topic T [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            if (argv[0].equals("consume")) consume(o);
            else if (argv[0].equals("produce")) produce(o);
            else RefClient.fail("unknown mode " + argv[0]);
        } catch (Throwable e) {
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage());
        }
        System.exit(0);
    }
}
