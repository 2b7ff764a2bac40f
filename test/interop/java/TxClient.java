/*
 * The Java side of the transaction proofs (issue 15): a stock TransactionMQProducer whose local
 * transaction commits, rolls back or leaves unknown, and whose checker answers the broker's
 * check-back the way `rocketwire produce --transaction` does: commit for an even sequence number,
 * rollback for an odd one (and what was decided for the committed / rolled back ones, should a
 * check come for them). One JSON object per line, like RefClient.
 *
 *   TxClient produce --namesrv ADDR --topic T --group G --commit 100 --rollback 100 --check 100
 *            [--check-timeout-ms 60000]
 *
 * Message seq = its index in the run (property "seq"); bodies "commit", "rollback", "check".
 */
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public class TxClient {
    public static void main(String[] argv) {
        if (argv.length == 0) RefClient.fail("usage: TxClient produce [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            if ("produce".equals(argv[0])) produce(o);
            else RefClient.fail("unknown command " + argv[0]);
        } catch (Throwable e) {
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage());
        }
        System.exit(0);
    }

    static LocalTransactionState answer(String body, int seq) {
        if (body.equals("commit")) return LocalTransactionState.COMMIT_MESSAGE;
        if (body.equals("rollback")) return LocalTransactionState.ROLLBACK_MESSAGE;
        return seq % 2 == 0 ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
    }

    private static void produce(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        int commits = Integer.parseInt(o.getOrDefault("commit", "0"));
        int rollbacks = Integer.parseInt(o.getOrDefault("rollback", "0"));
        int checks = Integer.parseInt(o.getOrDefault("check", "0"));
        long checkTimeoutMs = Long.parseLong(o.getOrDefault("check-timeout-ms", "60000"));
        Set<Integer> toCheck = ConcurrentHashMap.newKeySet();
        AtomicInteger checked = new AtomicInteger();
        AtomicInteger checkCommitted = new AtomicInteger();
        AtomicInteger checkRolledBack = new AtomicInteger();

        TransactionMQProducer p = new TransactionMQProducer(o.getOrDefault("group", "tx_ref_producer"), RefClient.hook(o));
        p.setNamesrvAddr(RefClient.req(o, "namesrv"));
        p.setInstanceName("tx-ref-" + ProcessHandle.current().pid());
        p.setSendMsgTimeout(10000);
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                String body = new String(msg.getBody(), StandardCharsets.UTF_8);
                if (body.equals("check")) return LocalTransactionState.UNKNOW;
                return answer(body, Integer.parseInt(msg.getUserProperty("seq")));
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                String body = new String(msg.getBody(), StandardCharsets.UTF_8);
                int seq = Integer.parseInt(msg.getUserProperty("seq"));
                LocalTransactionState s = answer(body, seq);
                RefClient.print(new RefClient.Json().put("type", "checked").put("seq", seq).put("body", body)
                    .put("msgId", msg.getMsgId()).put("topic", msg.getTopic()).put("state", s.name())
                    .put("checkTimes", msg.getProperty("TRANSACTION_CHECK_TIMES")));
                if (toCheck.remove(seq)) {
                    checked.incrementAndGet();
                    if (s == LocalTransactionState.COMMIT_MESSAGE) checkCommitted.incrementAndGet();
                    else checkRolledBack.incrementAndGet();
                }
                return s;
            }
        });
        p.start();
        long start = System.currentTimeMillis();
        int failed = 0;
        int total = commits + rollbacks + checks;
        for (int seq = 0; seq < total; seq++) {
            String body = seq < commits ? "commit" : seq < commits + rollbacks ? "rollback" : "check";
            Message m = new Message(topic, body.getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("seq", Integer.toString(seq));
            if (body.equals("check")) toCheck.add(seq);
            try {
                TransactionSendResult r = p.sendMessageInTransaction(m, null);
                RefClient.print(new RefClient.Json().put("type", "sent").put("seq", seq).put("body", body)
                    .put("status", r.getSendStatus().name()).put("state", r.getLocalTransactionState().name())
                    .put("msgId", r.getMsgId()).put("transactionId", r.getTransactionId()));
            } catch (Exception e) {
                failed++;
                toCheck.remove(seq);
                RefClient.print(new RefClient.Json().put("type", "error").put("seq", seq).put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
            }
        }
        long sentMs = System.currentTimeMillis() - start;
        long deadline = System.currentTimeMillis() + checkTimeoutMs;
        while (!toCheck.isEmpty() && System.currentTimeMillis() < deadline) RefClient.sleep(50);
        // the check thread sends END_TRANSACTION right after the listener returns
        RefClient.sleep(500);
        p.shutdown();
        RefClient.print(new RefClient.Json().put("type", "summary").put("sent", total - failed).put("failed", failed)
            .put("sentMs", sentMs).put("checked", checked.get()).put("checkCommitted", checkCommitted.get())
            .put("checkRolledBack", checkRolledBack.get()).put("unchecked", toCheck.size())
            .put("elapsedMs", System.currentTimeMillis() - start));
        if (failed > 0 || !toCheck.isEmpty()) System.exit(1);
    }
}
