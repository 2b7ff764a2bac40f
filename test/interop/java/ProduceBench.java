// The Java side of `rocketwire bench --produce-vs java`: Apache RocketMQ's DefaultMQProducer (its
// defaults) sending numbered bodies in one of three modes, warmed up first, printing JSON lines as
// RefClient consume-bench does (progress every --progress-ms, then one {"type":"bench"} line).
// Compiled beside RefClient.java (it uses RefClient's Json, parse and print).
//
//   ProduceBench sync|async|batch --namesrv A --topic T --count N [--warmup W] [--size S]
//                [--in-flight K] [--batch B] [--group G] [--progress-ms M]
//
//   sync   K threads, each calling send(msg) in a loop
//   async  send(msg, callback) from one thread, at most K in flight (a Semaphore of K permits)
//   batch  K threads, each calling send(Collection) with B messages
//
// The first W messages are a warm-up (the route, the connection, the JIT) and not measured. The
// rate runs from the first acknowledged send of the measured part to the last one, as the consumer
// benches count from the first message handled to the last: (acked - firstCount) / span, where
// firstCount is how many messages the first acknowledgement covered (1, or B for a batch).
// Body i: its number i as 8 big-endian bytes, then filler, as rocketwire's bench bodies.

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

public final class ProduceBench {
    private final DefaultMQProducer producer;
    private final String topic;
    private final int size;
    private final byte[] template;

    /** One measured (or warm-up) pass: acknowledgements counted and timed. */
    private static final class Pass {
        final AtomicLong next;
        final long end;
        final long count;
        final AtomicLong acked = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicLong firstNs = new AtomicLong();
        final AtomicLong lastNs = new AtomicLong();
        final AtomicLong firstCount = new AtomicLong();
        final AtomicReference<String> firstError = new AtomicReference<>();

        Pass(long first, long count) {
            next = new AtomicLong(first);
            end = first + count;
            this.count = count;
        }

        void ack(int n) {
            long now = System.nanoTime();
            if (firstNs.compareAndSet(0, now)) firstCount.set(n);
            // Acknowledgements of concurrent sends may be counted out of order by a few ns: keep the latest.
            lastNs.accumulateAndGet(now, Math::max);
            acked.addAndGet(n);
        }

        void fail(int n, Throwable e) {
            failed.addAndGet(n);
            firstError.compareAndSet(null, e.getClass().getSimpleName() + ": " + e.getMessage());
        }

        /** Give up after 1 % of the pass (at least 100) failed, as rocketwire's bench does. */
        boolean givenUp() {
            return failed.get() > Math.max(100, count / 100);
        }
    }

    private ProduceBench(DefaultMQProducer producer, String topic, int size) {
        this.producer = producer;
        this.topic = topic;
        this.size = size;
        this.template = new byte[Math.max(size, 8)];
        byte[] fill = "rocketwire-bench-".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int i = 0; i < template.length; i++) template[i] = fill[i % fill.length];
    }

    private Message message(long i) {
        byte[] b = new byte[template.length];
        System.arraycopy(template, 0, b, 0, b.length);
        for (int k = 0; k < 8; k++) b[k] = (byte) (i >>> (56 - 8 * k));
        Message m = new Message(topic, b);
        m.setTags("bench");
        return m;
    }

    private void runSync(Pass p, int threads) throws InterruptedException {
        runThreads(threads, () -> {
            for (long i; (i = p.next.getAndIncrement()) < p.end && !p.givenUp(); ) {
                try {
                    SendResult r = producer.send(message(i));
                    if (r.getSendStatus() == SendStatus.SEND_OK) p.ack(1);
                    else p.fail(1, new IllegalStateException(r.getSendStatus().name()));
                } catch (Exception e) {
                    p.fail(1, e);
                }
            }
        });
    }

    private void runBatch(Pass p, int threads, int batch) throws InterruptedException {
        runThreads(threads, () -> {
            for (long i; (i = p.next.getAndAdd(batch)) < p.end && !p.givenUp(); ) {
                int n = (int) Math.min(batch, p.end - i);
                List<Message> msgs = new ArrayList<>(n);
                for (int k = 0; k < n; k++) msgs.add(message(i + k));
                try {
                    SendResult r = producer.send(msgs);
                    if (r.getSendStatus() == SendStatus.SEND_OK) p.ack(n);
                    else p.fail(n, new IllegalStateException(r.getSendStatus().name()));
                } catch (Exception e) {
                    p.fail(n, e);
                }
            }
        });
    }

    private void runAsync(Pass p, int inFlight) throws InterruptedException {
        Semaphore window = new Semaphore(inFlight);
        for (long i; (i = p.next.getAndIncrement()) < p.end && !p.givenUp(); ) {
            window.acquire();
            try {
                producer.send(message(i), new SendCallback() {
                    @Override
                    public void onSuccess(SendResult r) {
                        if (r.getSendStatus() == SendStatus.SEND_OK) p.ack(1);
                        else p.fail(1, new IllegalStateException(r.getSendStatus().name()));
                        window.release();
                    }

                    @Override
                    public void onException(Throwable e) {
                        p.fail(1, e);
                        window.release();
                    }
                });
            } catch (Exception e) {
                p.fail(1, e);
                window.release();
            }
        }
        window.acquire(inFlight); // every send answered
        window.release(inFlight);
    }

    private static void runThreads(int n, Runnable body) throws InterruptedException {
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            ts[i] = new Thread(body, "produce-bench-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
    }

    private void pass(String kind, Pass p, int inFlight, int batch) throws InterruptedException {
        switch (kind) {
            case "sync": runSync(p, inFlight); break;
            case "async": runAsync(p, inFlight); break;
            default: runBatch(p, inFlight, batch); break;
        }
    }

    /** CPU time of this JVM (every thread, the GC's included), in ns. */
    private static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) RefClient.fail("usage: ProduceBench sync|async|batch --namesrv A --topic T --count N [options]");
        String kind = argv[0];
        if (!kind.equals("sync") && !kind.equals("async") && !kind.equals("batch")) RefClient.fail("unknown mode " + kind);
        Map<String, String> o = RefClient.parse(argv);
        long count = Long.parseLong(RefClient.req(o, "count"));
        long warmup = Long.parseLong(o.getOrDefault("warmup", "0"));
        int size = Integer.parseInt(o.getOrDefault("size", "1024"));
        int inFlight = Integer.parseInt(o.getOrDefault("in-flight", "1"));
        int batch = Integer.parseInt(o.getOrDefault("batch", "32"));
        long progressMs = Long.parseLong(o.getOrDefault("progress-ms", "0"));

        DefaultMQProducer producer = new DefaultMQProducer(o.getOrDefault("group", "java_produce_bench"));
        producer.setNamesrvAddr(RefClient.req(o, "namesrv"));
        producer.setInstanceName("produce-bench-" + ProcessHandle.current().pid());
        if (o.containsKey("compress-over")) producer.setCompressMsgBodyOverHowmuch(Integer.parseInt(o.get("compress-over")));
        producer.start();
        ProduceBench b = new ProduceBench(producer, RefClient.req(o, "topic"), size);
        RefClient.print(new RefClient.Json().put("type", "started").put("topic", b.topic).put("mode", kind));

        Pass w = new Pass(0, warmup);
        if (warmup > 0) b.pass(kind, w, inFlight, batch);

        Pass p = new Pass(warmup, count);
        ScheduledExecutorService progress = null;
        if (progressMs > 0) {
            progress = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread th = new Thread(r, "produce-bench-progress");
                th.setDaemon(true);
                return th;
            });
            progress.scheduleAtFixedRate(
                () -> RefClient.print(new RefClient.Json().put("type", "progress").put("received", p.acked.get()).put("ts", System.currentTimeMillis())),
                progressMs, progressMs, TimeUnit.MILLISECONDS);
        }
        long cpu0 = processCpuNs();
        b.pass(kind, p, inFlight, batch);
        long cpuNs = processCpuNs() - cpu0;
        if (progress != null) progress.shutdownNow();
        producer.shutdown();

        long acked = p.acked.get();
        double spanMs = (p.lastNs.get() - p.firstNs.get()) / 1e6;
        String error = p.firstError.get() != null ? p.firstError.get() : w.firstError.get();
        RefClient.print(new RefClient.Json().put("type", "bench").put("mode", kind).put("inFlight", inFlight)
            .put("received", acked).put("failed", p.failed.get()).put("warmupFailed", w.failed.get())
            .put("expected", count).put("complete", acked == count)
            .put("spanMs", spanMs).put("firstCount", p.firstCount.get()).put("cpuMs", cpuNs / 1e6)
            .put("msgsPerSec", spanMs > 0 ? (acked - p.firstCount.get()) * 1000.0 / spanMs : 0)
            .put("error", error));
        System.exit(0);
    }
}
