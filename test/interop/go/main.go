// Command rwgo runs the official Apache RocketMQ Go client (rocketmq-client-go v2) for rocketwire's
// interop tests, as test/interop/java/RefClient.java runs the Java one. Each subcommand prints one
// JSON object per line on stdout; the client's own log goes to stderr (level from -log).
//
//	rwgo produce  -namesrv A -topic T -count N [-mode sync|async|oneway|batch] [-tag X] [-keys k-{i}]
//	              [-props a={i},b=x] [-delay L] [-sharding K] [-body go-{i}]
//	rwgo consume  -namesrv A -topic T -group G [-expect N] [-orderly] [-sql EXPR | -tags EXPR]
//	              [-retry-first] [-fail-prefix P] [-max-reconsume M] [-from first|last]
//	rwgo tx       -namesrv A -topic T -group G -commit N -rollback N -check N   (until stdin closes)
//	rwgo admin    -namesrv A -op create-topic|delete-topic|topic-list|groups|queues [-broker B] [-topic T] [-queues Q]
//
// consume exits once it has seen -expect deliveries (after shutting the consumer down, which
// persists its offsets), or, with -expect 0, when its stdin closes. Every command ends with a
// {"type":"summary",...} line and exits 0 unless it could not run at all.
package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

// emit writes one JSON line; lines of concurrent callbacks never interleave.
func emit(v map[string]interface{}) {
	out.Lock()
	defer out.Unlock()
	_ = out.enc.Encode(v)
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "rwgo: "+format+"\n", a...)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: rwgo produce|consume|tx|admin [flags]")
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	namesrv := fs.String("namesrv", "127.0.0.1:9876", "name server address(es), ';'-separated")
	logLevel := fs.String("log", "warn", "client log level on stderr: debug|info|warn|error")
	timeoutMs := fs.Int("timeout", 60000, "give up after this many milliseconds")
	var run func()
	switch cmd {
	case "produce":
		run = produceCmd(fs, namesrv)
	case "consume":
		run = consumeCmd(fs, namesrv, timeoutMs)
	case "tx":
		run = txCmd(fs, namesrv, timeoutMs)
	case "admin":
		run = adminCmd(fs, namesrv)
	default:
		fail("unknown command %q", cmd)
	}
	_ = fs.Parse(args)
	rlog.SetLogLevel(*logLevel)
	run()
}

func nameServers(s string) primitive.NamesrvAddr {
	return primitive.NamesrvAddr(strings.Split(s, ";"))
}

func expand(template string, i int) string {
	return strings.ReplaceAll(template, "{i}", strconv.Itoa(i))
}

// props parses "a={i},b=x" into the properties of message i.
func props(spec string, i int) map[string]string {
	m := map[string]string{}
	if spec == "" {
		return m
	}
	for _, kv := range strings.Split(spec, ",") {
		p := strings.SplitN(kv, "=", 2)
		if len(p) == 2 {
			m[p[0]] = expand(p[1], i)
		}
	}
	return m
}

func sha(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

func errText(err error) interface{} {
	if err == nil {
		return nil
	}
	return err.Error()
}

// ---- produce ------------------------------------------------------------------------------------

func produceCmd(fs *flag.FlagSet, namesrv *string) func() {
	topic := fs.String("topic", "", "topic")
	group := fs.String("group", "rwgo_pg", "producer group")
	count := fs.Int("count", 10, "messages to send")
	mode := fs.String("mode", "sync", "sync|async|oneway|batch")
	batchSize := fs.Int("batch-size", 10, "messages per batch (mode batch)")
	tag := fs.String("tag", "", "tag of every message")
	keys := fs.String("keys", "", "key template ({i} = index)")
	propSpec := fs.String("props", "", "user properties, e.g. a={i},b=x")
	delay := fs.Int("delay", 0, "delay level")
	sharding := fs.Int("sharding", 0, "orderly: sharding key s<i mod K>, queue chosen by hash of it")
	body := fs.String("body", "go-{i}", "body template")
	return func() {
		opts := []producer.Option{
			producer.WithNameServer(nameServers(*namesrv)),
			producer.WithGroupName(*group),
			producer.WithRetry(2),
		}
		if *sharding > 0 {
			opts = append(opts, producer.WithQueueSelector(producer.NewHashQueueSelector()))
		}
		p, err := rocketmq.NewProducer(opts...)
		if err != nil {
			fail("new producer: %v", err)
		}
		if err := p.Start(); err != nil {
			fail("start producer: %v", err)
		}
		msg := func(i int) *primitive.Message {
			m := primitive.NewMessage(*topic, []byte(expand(*body, i)))
			if *tag != "" {
				m.WithTag(*tag)
			}
			if *keys != "" {
				m.WithKeys([]string{expand(*keys, i)})
			}
			for k, v := range props(*propSpec, i) {
				m.WithProperty(k, v)
			}
			if *delay > 0 {
				m.WithDelayTimeLevel(*delay)
			}
			if *sharding > 0 {
				m.WithShardingKey("s" + strconv.Itoa(i%*sharding))
			}
			return m
		}
		var sent, failed int64
		errs := []string{}
		var errMu sync.Mutex
		report := func(i int, r *primitive.SendResult, err error) {
			if err != nil || r == nil || r.Status != primitive.SendOK {
				atomic.AddInt64(&failed, 1)
				errMu.Lock()
				errs = append(errs, fmt.Sprintf("%d: %v %v", i, err, r))
				errMu.Unlock()
				return
			}
			atomic.AddInt64(&sent, 1)
			emit(map[string]interface{}{
				"type": "sent", "i": i, "status": "SEND_OK", "msgId": r.MsgID, "offsetMsgId": r.OffsetMsgID,
				"brokerName": r.MessageQueue.BrokerName, "queueId": r.MessageQueue.QueueId, "queueOffset": r.QueueOffset,
			})
		}
		ctx := context.Background()
		switch *mode {
		case "sync":
			for i := 0; i < *count; i++ {
				r, err := p.SendSync(ctx, msg(i))
				report(i, r, err)
			}
		case "async":
			var wg sync.WaitGroup
			for i := 0; i < *count; i++ {
				wg.Add(1)
				i := i
				err := p.SendAsync(ctx, func(_ context.Context, r *primitive.SendResult, err error) {
					report(i, r, err)
					wg.Done()
				}, msg(i))
				if err != nil {
					report(i, nil, err)
					wg.Done()
				}
			}
			wg.Wait()
		case "oneway":
			for i := 0; i < *count; i++ {
				if err := p.SendOneWay(ctx, msg(i)); err != nil {
					report(i, nil, err)
				} else {
					atomic.AddInt64(&sent, 1)
					emit(map[string]interface{}{"type": "sent", "i": i, "status": "ONEWAY"})
				}
			}
			// The client sends oneway requests without the oneway flag, so the broker answers them. A
			// process that closes its connection with answers unread resets it, and its kernel drops
			// what it had not sent yet (Apache's broker or ours alike). One sync send after them (body
			// "fence", not counted) is answered after all of them, so none is unread at Shutdown.
			f := primitive.NewMessage(*topic, []byte("fence"))
			r, err := p.SendSync(ctx, f)
			emit(map[string]interface{}{"type": "fence", "ok": err == nil && r.Status == primitive.SendOK, "error": errText(err)})
		case "batch":
			for start := 0; start < *count; start += *batchSize {
				end := start + *batchSize
				if end > *count {
					end = *count
				}
				batch := []*primitive.Message{}
				for i := start; i < end; i++ {
					batch = append(batch, msg(i))
				}
				r, err := p.SendSync(ctx, batch...)
				if err != nil || r.Status != primitive.SendOK {
					for i := start; i < end; i++ {
						report(i, r, err)
					}
					continue
				}
				// The client leaves a batch's MsgID empty (it reads UNIQ_KEY off the one wire message);
				// the broker's answer names every stored message, comma-separated, in the batch's order.
				ids := strings.Split(r.OffsetMsgID, ",")
				for k, i := 0, start; i < end; k, i = k+1, i+1 {
					atomic.AddInt64(&sent, 1)
					id := ""
					if k < len(ids) {
						id = ids[k]
					}
					emit(map[string]interface{}{
						"type": "sent", "i": i, "status": "SEND_OK", "offsetMsgId": id, "batchIds": len(ids),
						"brokerName": r.MessageQueue.BrokerName, "queueId": r.MessageQueue.QueueId,
						"queueOffset": r.QueueOffset + int64(k),
					})
				}
			}
		default:
			fail("unknown -mode %q", *mode)
		}
		_ = p.Shutdown()
		emit(map[string]interface{}{"type": "summary", "sent": sent, "failed": failed, "errors": errs})
	}
}

// ---- consume ------------------------------------------------------------------------------------

func msgLine(m *primitive.MessageExt, status string) map[string]interface{} {
	return map[string]interface{}{
		"type": "msg", "status": status, "topic": m.Topic, "queueId": m.Queue.QueueId,
		"brokerName": m.Queue.BrokerName, "queueOffset": m.QueueOffset, "msgId": m.MsgId,
		"offsetMsgId": m.OffsetMsgId, "tags": m.GetTags(), "keys": m.GetKeys(), "properties": m.GetProperties(),
		"reconsumeTimes": m.ReconsumeTimes, "bornTimestamp": m.BornTimestamp, "storeTimestamp": m.StoreTimestamp,
		"body": string(m.Body), "bodySha1": sha(m.Body), "receivedAt": time.Now().UnixMilli(),
	}
}

func consumeCmd(fs *flag.FlagSet, namesrv *string, timeoutMs *int) func() {
	topic := fs.String("topic", "", "topic")
	group := fs.String("group", "rwgo_cg", "consumer group")
	expect := fs.Int("expect", 0, "exit after this many deliveries (0: when stdin closes)")
	orderly := fs.Bool("orderly", false, "consume orderly (queue locks, one message at a time per queue)")
	sql := fs.String("sql", "", "SQL92 selector")
	tags := fs.String("tags", "*", "tag selector")
	retryFirst := fs.Bool("retry-first", false, "fail each message's first delivery (reconsumeTimes 0)")
	failPrefix := fs.String("fail-prefix", "", "fail every delivery of a body with this prefix")
	maxReconsume := fs.Int("max-reconsume", -1, "maxReconsumeTimes (-1: the client's default)")
	from := fs.String("from", "first", "first|last: where a new group starts")
	return func() {
		where := consumer.ConsumeFromFirstOffset
		if *from == "last" {
			where = consumer.ConsumeFromLastOffset
		}
		opts := []consumer.Option{
			consumer.WithNameServer(nameServers(*namesrv)),
			consumer.WithGroupName(*group),
			consumer.WithConsumeFromWhere(where),
			consumer.WithConsumerOrder(*orderly),
		}
		if *maxReconsume >= 0 {
			opts = append(opts, consumer.WithMaxReconsumeTimes(int32(*maxReconsume)))
		}
		if *orderly {
			// A failed orderly message is retried in place after this pause (default 1 s).
			opts = append(opts, consumer.WithSuspendCurrentQueueTimeMillis(100*time.Millisecond))
		}
		c, err := rocketmq.NewPushConsumer(opts...)
		if err != nil {
			fail("new consumer: %v", err)
		}
		var delivered, failedN int64
		done := make(chan struct{})
		var doneOnce sync.Once
		selector := consumer.MessageSelector{Type: consumer.TAG, Expression: *tags}
		if *sql != "" {
			selector = consumer.MessageSelector{Type: consumer.SQL92, Expression: *sql}
		}
		shouldFail := func(m *primitive.MessageExt) bool {
			return (*retryFirst && m.ReconsumeTimes == 0) ||
				(*failPrefix != "" && strings.HasPrefix(string(m.Body), *failPrefix))
		}
		err = c.Subscribe(*topic, selector, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			result, status := consumer.ConsumeSuccess, "CONSUME_SUCCESS"
			for _, m := range msgs {
				if shouldFail(m) {
					result, status = consumer.ConsumeRetryLater, "RECONSUME_LATER"
					if *orderly {
						result, status = consumer.SuspendCurrentQueueAMoment, "SUSPEND_CURRENT_QUEUE_A_MOMENT"
					}
				}
			}
			for _, m := range msgs {
				if status != "CONSUME_SUCCESS" {
					atomic.AddInt64(&failedN, 1)
				}
				emit(msgLine(m, status))
				if n := atomic.AddInt64(&delivered, 1); *expect > 0 && n >= int64(*expect) {
					doneOnce.Do(func() { close(done) })
				}
			}
			return result, nil
		})
		if err != nil {
			fail("subscribe: %v", err)
		}
		start := time.Now()
		if err := c.Start(); err != nil {
			fail("start consumer: %v", err)
		}
		emit(map[string]interface{}{"type": "started", "group": *group, "topic": *topic})
		if *expect == 0 {
			go func() {
				_, _ = io.Copy(io.Discard, os.Stdin)
				doneOnce.Do(func() { close(done) })
			}()
			// Send the offsets every 100 ms (the client's own period is 5 s), so that a caller
			// waiting for the broker's committed offsets to reach the end waits for the consumer,
			// not its timer.
			if p, ok := c.(interface{ PersistConsumerOffset() error }); ok {
				go func() {
					for {
						select {
						case <-done:
							return
						case <-time.After(100 * time.Millisecond):
							_ = p.PersistConsumerOffset()
						}
					}
				}()
			}
		}
		complete := true
		select {
		case <-done:
		case <-time.After(time.Duration(*timeoutMs) * time.Millisecond):
			complete = false
		}
		// The listener returned, but the client records a queue's new offset just after: wait until
		// every queue it holds is consumed up to what it pulled, so that Shutdown, which sends each
		// queue's offset to the broker, sends the last one.
		for deadline := time.Now().Add(5 * time.Second); complete && time.Now().Before(deadline); {
			lag := int64(0)
			for _, n := range c.GetOffsetDiffMap() {
				lag += n
			}
			if lag == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = c.Shutdown()
		emit(map[string]interface{}{
			"type": "summary", "delivered": atomic.LoadInt64(&delivered), "failed": atomic.LoadInt64(&failedN),
			"expected": *expect, "complete": complete, "elapsedMs": time.Since(start).Milliseconds(),
		})
	}
}

// ---- transactions -------------------------------------------------------------------------------

// txListener ends each half message by its body: commit, rollback, or check (unknown now; the
// broker's check-back then commits even i and rolls back odd i).
type txListener struct {
	checked  int64
	want     int64
	allDone  chan struct{}
	doneOnce sync.Once
	mu       sync.Mutex
	seen     map[string]bool
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	switch string(m.Body) {
	case "commit":
		return primitive.CommitMessageState
	case "rollback":
		return primitive.RollbackMessageState
	}
	return primitive.UnknowState
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	i, _ := strconv.Atoi(m.GetProperty("i"))
	state, name := primitive.RollbackMessageState, "ROLLBACK"
	if i%2 == 0 {
		state, name = primitive.CommitMessageState, "COMMIT"
	}
	emit(map[string]interface{}{
		"type": "checked", "i": i, "body": string(m.Body), "state": name, "transactionId": m.TransactionId,
		"msgId": m.MsgId,
	})
	l.mu.Lock()
	first := !l.seen[m.GetProperty("i")+string(m.Body)]
	l.seen[m.GetProperty("i")+string(m.Body)] = true
	l.mu.Unlock()
	if first && string(m.Body) == "check" && atomic.AddInt64(&l.checked, 1) >= l.want {
		l.doneOnce.Do(func() { close(l.allDone) })
	}
	return state
}

func txCmd(fs *flag.FlagSet, namesrv *string, timeoutMs *int) func() {
	topic := fs.String("topic", "", "topic")
	group := fs.String("group", "rwgo_tx_pg", "producer group")
	commit := fs.Int("commit", 10, "messages committed at once")
	rollback := fs.Int("rollback", 10, "messages rolled back at once")
	check := fs.Int("check", 10, "messages left unknown, ended by the check-back")
	return func() {
		l := &txListener{want: int64(*check), allDone: make(chan struct{}), seen: map[string]bool{}}
		if *check == 0 {
			close(l.allDone)
		}
		p, err := rocketmq.NewTransactionProducer(l,
			producer.WithNameServer(nameServers(*namesrv)),
			producer.WithGroupName(*group),
			producer.WithRetry(2),
		)
		if err != nil {
			fail("new transaction producer: %v", err)
		}
		if err := p.Start(); err != nil {
			fail("start transaction producer: %v", err)
		}
		var sent, failed int
		errs := []string{}
		i := 0
		for _, part := range []struct {
			body string
			n    int
		}{{"commit", *commit}, {"rollback", *rollback}, {"check", *check}} {
			for k := 0; k < part.n; k, i = k+1, i+1 {
				m := primitive.NewMessage(*topic, []byte(part.body))
				m.WithProperty("i", strconv.Itoa(i))
				r, err := p.SendMessageInTransaction(context.Background(), m)
				if err != nil || r.Status != primitive.SendOK {
					failed++
					errs = append(errs, fmt.Sprintf("%d: %v", i, err))
					continue
				}
				sent++
				emit(map[string]interface{}{
					"type": "sent", "i": i, "body": part.body, "msgId": r.MsgID, "queueId": r.MessageQueue.QueueId,
					"localState": int(r.State),
				})
			}
		}
		emit(map[string]interface{}{"type": "ended", "sent": sent, "failed": failed})
		// The end of a checked message goes to the broker after CheckLocalTransaction returns: the
		// producer stays up until stdin closes (the caller saw the broker end them all), or the timeout.
		stdinClosed := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdinClosed)
		}()
		complete := true
		select {
		case <-stdinClosed:
		case <-time.After(time.Duration(*timeoutMs) * time.Millisecond):
			complete = false
		}
		select {
		case <-l.allDone:
		default:
			complete = false
		}
		_ = p.Shutdown()
		emit(map[string]interface{}{
			"type": "summary", "sent": sent, "failed": failed, "errors": errs,
			"checked": atomic.LoadInt64(&l.checked), "complete": complete,
		})
	}
}

// ---- admin --------------------------------------------------------------------------------------

func adminCmd(fs *flag.FlagSet, namesrv *string) func() {
	op := fs.String("op", "", "create-topic|delete-topic|topic-list|groups|queues")
	broker := fs.String("broker", "", "broker address")
	topic := fs.String("topic", "", "topic")
	queues := fs.Int("queues", 4, "read and write queues (create-topic)")
	return func() {
		a, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver(nameServers(*namesrv))))
		if err != nil {
			fail("new admin: %v", err)
		}
		defer a.Close()
		ctx := context.Background()
		res := map[string]interface{}{"type": "summary", "op": *op}
		switch *op {
		case "create-topic":
			err = a.CreateTopic(ctx, admin.WithTopicCreate(*topic), admin.WithBrokerAddrCreate(*broker),
				admin.WithReadQueueNums(*queues), admin.WithWriteQueueNums(*queues))
		case "delete-topic":
			opts := []admin.OptionDelete{admin.WithTopicDelete(*topic)}
			if *broker != "" {
				opts = append(opts, admin.WithBrokerAddrDelete(*broker))
			}
			err = a.DeleteTopic(ctx, opts...)
		case "topic-list":
			var l *admin.TopicList
			if l, err = a.FetchAllTopicList(ctx); err == nil {
				sort.Strings(l.TopicList)
				res["topics"] = l.TopicList
			}
		case "groups":
			var g *admin.SubscriptionGroupWrapper
			if g, err = a.GetAllSubscriptionGroup(ctx, *broker, 3*time.Second); err == nil {
				names := []string{}
				for name := range g.SubscriptionGroupTable {
					names = append(names, name)
				}
				sort.Strings(names)
				res["groups"] = names
			}
		case "queues":
			var mqs []*primitive.MessageQueue
			if mqs, err = a.FetchPublishMessageQueues(ctx, *topic); err == nil {
				list := []map[string]interface{}{}
				for _, mq := range mqs {
					list = append(list, map[string]interface{}{"brokerName": mq.BrokerName, "queueId": mq.QueueId})
				}
				res["queues"] = list
			}
		default:
			fail("unknown -op %q", *op)
		}
		res["error"] = errText(err)
		emit(res)
	}
}
