import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.AccessChannel;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.trace.TraceBean;
import org.apache.rocketmq.client.trace.TraceContext;
import org.apache.rocketmq.client.trace.TraceDataEncoder;
import org.apache.rocketmq.client.trace.TraceTransferBean;
import org.apache.rocketmq.client.trace.TraceType;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageType;

/**
 * Message trace peer (issue 15). Commands:
 *   encode                      golden vectors: Java's TraceDataEncoder on fixed TraceContexts, one JSON line each
 *   produce --topic T --count N [--trace-topic X]   a DefaultMQProducer with enableMsgTrace
 *   consume --topic T --group G --expect N [--trace-topic X]   a DefaultMQPushConsumer with enableMsgTrace
 * Producer and consumer shut down before exiting, which flushes their AsyncTraceDispatcher.
 */
public final class TraceClient {
    public static void main(String[] argv) {
        if (argv.length == 0) RefClient.fail("usage: TraceClient encode|produce|consume [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "encode": encode(); break;
                case "produce": produce(o); break;
                case "consume": consume(o); break;
                default: RefClient.fail("unknown command " + argv[0]);
            }
        } catch (Throwable e) {
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage());
        }
        System.exit(0);
    }

    // ---- encode --------------------------------------------------------------------------------

    private static TraceBean bean(String topic, String msgId, String offsetMsgId, String tags, String keys, String storeHost,
                                  int bodyLength, MessageType type, int retryTimes) {
        TraceBean b = new TraceBean();
        b.setTopic(topic);
        b.setMsgId(msgId);
        b.setOffsetMsgId(offsetMsgId);
        b.setTags(tags);
        b.setKeys(keys);
        b.setStoreHost(storeHost);
        b.setBodyLength(bodyLength);
        b.setMsgType(type);
        b.setRetryTimes(retryTimes);
        return b;
    }

    private static TraceContext ctx(TraceType type, long time, String region, String group, int cost, boolean success,
                                    String requestId, int contextCode, AccessChannel channel, TraceBean... beans) {
        TraceContext c = new TraceContext();
        c.setTraceType(type);
        c.setTimeStamp(time);
        c.setRegionId(region);
        c.setGroupName(group);
        c.setCostTime(cost);
        c.setSuccess(success);
        c.setRequestId(requestId);
        c.setContextCode(contextCode);
        c.setAccessChannel(channel);
        c.setTraceBeans(new ArrayList<>(Arrays.asList(beans)));
        return c;
    }

    private static RefClient.Json beanJson(TraceBean b) {
        RefClient.Json j = new RefClient.Json()
            .put("topic", b.getTopic()).put("msgId", b.getMsgId()).put("offsetMsgId", b.getOffsetMsgId())
            .put("tags", b.getTags()).put("keys", b.getKeys()).put("storeHost", b.getStoreHost())
            .put("bodyLength", b.getBodyLength()).put("msgType", b.getMsgType() == null ? null : b.getMsgType().ordinal())
            .put("retryTimes", b.getRetryTimes());
        if (b.getTransactionState() != null) {
            j.put("transactionId", b.getTransactionId()).put("transactionState", b.getTransactionState().name())
                .put("fromTransactionCheck", b.isFromTransactionCheck());
        }
        return j;
    }

    private static void vector(String name, TraceContext c) {
        TraceTransferBean t = TraceDataEncoder.encoderFromContextBean(c);
        List<Object> beans = new ArrayList<>();
        for (TraceBean b : c.getTraceBeans()) beans.add(beanJson(b));
        RefClient.Json input = new RefClient.Json()
            .put("traceType", c.getTraceType().name()).put("timeStamp", c.getTimeStamp()).put("regionId", c.getRegionId())
            .put("groupName", c.getGroupName()).put("costTime", c.getCostTime()).put("success", c.isSuccess())
            .put("requestId", c.getRequestId()).put("contextCode", c.getContextCode())
            .put("accessChannel", c.getAccessChannel() == null ? null : c.getAccessChannel().name())
            .put("traceBeans", beans);
        // what Java decodes back from its own text (the fields a reader gets)
        List<Object> decoded = new ArrayList<>();
        for (TraceContext d : TraceDataEncoder.decoderFromTraceDataString(t.getTransData())) {
            List<Object> db = new ArrayList<>();
            for (TraceBean b : d.getTraceBeans()) db.add(new RefClient.Json().put("msgId", b.getMsgId()).put("keys", b.getKeys()).put("topic", b.getTopic()));
            // a CLOUD SubAfter record carries no time: Java's decoder leaves the context's own (now)
            boolean noTime = d.getTraceType() == TraceType.SubAfter && c.getAccessChannel() == AccessChannel.CLOUD;
            decoded.add(new RefClient.Json().put("traceType", d.getTraceType().name()).put("timeStamp", noTime ? null : d.getTimeStamp())
                .put("groupName", d.getGroupName())
                // a context Java decodes gets a fresh random requestId unless the record carries one (Sub records)
                .put("requestId", d.getTraceType() == TraceType.SubBefore || d.getTraceType() == TraceType.SubAfter ? d.getRequestId() : null)
                .put("costTime", d.getCostTime())
                .put("success", d.isSuccess()).put("contextCode", d.getContextCode()).put("traceBeans", db));
        }
        RefClient.print(new RefClient.Json().put("type", "vector").put("name", name).put("input", input)
            .put("data", t.getTransData()).put("keys", new ArrayList<>(new TreeSet<>(t.getTransKey()))).put("decoded", decoded));
    }

    private static void encode() {
        String id1 = "7F0000010B9418B4AAC2677A5D6E0000";
        String id2 = "7F0000010B9418B4AAC2677A5D6E0001";
        String off1 = "7F00000100002A9F0000000000000000";
        vector("pub", ctx(TraceType.Pub, 1700000000123L, "DefaultRegion", "pg_trace", 3, true, "", 0, null,
            bean("TopicTest", id1, off1, "TagA", "k1 k2", "127.0.0.1:10911", 11, MessageType.Normal_Msg, 0)));
        vector("pub-nulls-failed", ctx(TraceType.Pub, 1700000000456L, "DefaultRegion", "pg_trace", 0, false, "", 0, null,
            bean("TopicTest", id2, null, null, null, "127.0.0.1:10911", 0, MessageType.Delay_Msg, 0)));
        vector("pub-trans-half", ctx(TraceType.Pub, 1700000000789L, "DefaultRegion", "pg_tx", 7, true, "", 0, null,
            bean("TxTopic", id1, off1, "TagTx", "order-1", "10.0.0.2:10911", 4096, MessageType.Trans_Msg_Half, 0)));
        vector("sub-before-two", ctx(TraceType.SubBefore, 1700000001000L, "DefaultRegion", "cg_trace", 0, true,
            "7F0000010B9418B4AAC2677A5D6F0000", 0, null,
            bean("TopicTest", id1, "", "TagA", "k1 k2", "", 200, MessageType.Normal_Msg, 0),
            bean("TopicTest", id2, "", null, null, "", 180, MessageType.Normal_Msg, 3)));
        vector("sub-after-local", ctx(TraceType.SubAfter, 1700000001050L, "DefaultRegion", "cg_trace", 25, true,
            "7F0000010B9418B4AAC2677A5D6F0000", 0, AccessChannel.LOCAL,
            bean("TopicTest", id1, "", "TagA", "k1 k2", "", 200, MessageType.Normal_Msg, 0),
            bean("TopicTest", id2, "", null, null, "", 180, MessageType.Normal_Msg, 3)));
        vector("sub-after-failed", ctx(TraceType.SubAfter, 1700000001099L, "DefaultRegion", "cg_trace", 1, false,
            "7F0000010B9418B4AAC2677A5D6F0001", 4, AccessChannel.LOCAL,
            bean("TopicTest", id1, "", "TagA", "k1", "", 200, MessageType.Normal_Msg, 1)));
        vector("sub-after-cloud", ctx(TraceType.SubAfter, 1700000001100L, "cn-hz", "cg_trace", 9, true,
            "7F0000010B9418B4AAC2677A5D6F0002", 0, AccessChannel.CLOUD,
            bean("TopicTest", id1, "", "TagA", "k1", "", 200, MessageType.Normal_Msg, 0)));
        TraceBean tx = bean("TxTopic", id1, "", "TagTx", "order-1", "10.0.0.2:10911", 0, MessageType.Trans_msg_Commit, 0);
        tx.setTransactionId("7F0000010B9418B4AAC2677A5D700000");
        tx.setTransactionState(LocalTransactionState.COMMIT_MESSAGE);
        tx.setFromTransactionCheck(true);
        vector("end-transaction", ctx(TraceType.EndTransaction, 1700000002000L, "DefaultRegion", "pg_tx", 0, true, "", 0, null, tx));
        TraceBean rb = bean("TxTopic", id2, "", null, "a  b ", "10.0.0.2:10911", 0, MessageType.Trans_msg_Commit, 0);
        rb.setTransactionId(null);
        rb.setTransactionState(LocalTransactionState.UNKNOW);
        rb.setFromTransactionCheck(false);
        vector("end-transaction-unknow", ctx(TraceType.EndTransaction, 1700000002001L, "DefaultRegion", "pg_tx", 0, true, "", 0, null, rb));
    }

    // ---- produce / consume ---------------------------------------------------------------------

    private static void produce(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        int count = Integer.parseInt(o.getOrDefault("count", "1"));
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "ref_trace_producer"), RefClient.hook(o), true, o.get("trace-topic"));
        p.setNamesrvAddr(RefClient.req(o, "namesrv"));
        p.setInstanceName("ref-trace-" + ProcessHandle.current().pid());
        p.start();
        for (int i = 0; i < count; i++) {
            Message m = new Message(topic, o.getOrDefault("tags", "TagJ"), "jkey-" + i, ("java-traced-" + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            RefClient.print(new RefClient.Json().put("type", "sent").put("i", i).put("msgId", r.getMsgId())
                .put("offsetMsgId", r.getOffsetMsgId()).put("status", r.getSendStatus().name())
                .put("regionId", r.getRegionId()).put("traceOn", r.isTraceOn()));
        }
        p.shutdown();
        RefClient.print(new RefClient.Json().put("type", "done").put("sent", count));
    }

    private static void consume(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        long expect = Long.parseLong(o.getOrDefault("expect", "1"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "30000"));
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(RefClient.req(o, "group"), RefClient.hook(o), new AllocateMessageQueueAveragely(), true, o.get("trace-topic"));
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        c.setInstanceName("ref-trace-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        // shutdown waits for the running call, whose SubAfter record is appended after the listener returns,
        // so that the dispatcher's final flush carries it
        c.setAwaitTerminationMillisWhenShutdown(5000);
        c.subscribe(topic, "*");
        AtomicLong n = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                RefClient.print(new RefClient.Json().put("type", "msg").put("msgId", m.getMsgId())
                    .put("region", m.getProperty("MSG_REGION")).put("traceOn", m.getProperty("TRACE_ON")));
                if (n.incrementAndGet() >= expect) done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        RefClient.print(new RefClient.Json().put("type", "started"));
        boolean ok = done.await(timeoutMs, TimeUnit.MILLISECONDS);
        c.shutdown();
        RefClient.print(new RefClient.Json().put("type", "done").put("consumed", n.get()).put("complete", ok));
    }
}
