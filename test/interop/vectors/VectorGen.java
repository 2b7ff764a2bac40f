import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import com.alibaba.fastjson.parser.Feature;
import com.alibaba.fastjson.serializer.SerializerFeature;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.netty.NettyEncoder;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Writes golden vectors for rocketwire's codec using Apache RocketMQ's own classes. It compiles
 * unchanged against 4.9.x and 5.x: classes that moved between packages (the protocol headers and
 * bodies went from org.apache.rocketmq.common.protocol to org.apache.rocketmq.remoting.protocol)
 * are reached by reflection, everything else is called directly.
 *
 * Usage: java -cp ... VectorGen <rocketmq version> <output folder>
 */
public class VectorGen {
  static String version;
  static Path out;

  public static void main(String[] args) throws Exception {
    version = args[0];
    out = Paths.get(args[1]);
    Files.createDirectories(out);
    write("frames.json", frames());
    write("messages.json", messages());
    write("batches.json", batches());
    write("bodies.json", bodies());
    write("hashmap-order.json", hashMapOrder());
    write("decode-cases.json", decodeCases());
    write("frame-limits.json", frameLimits());
    write("acl-signatures.json", aclSignatures());
  }

  // ---------------------------------------------------------------- helpers

  static void write(String name, Object value) throws Exception {
    String text = JSON.toJSONString(value, SerializerFeature.PrettyFormat, SerializerFeature.DisableCircularReferenceDetect) + "\n";
    Files.write(out.resolve(name), text.getBytes(StandardCharsets.UTF_8));
  }

  static JSONObject obj() {
    return new JSONObject(true);
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder(b.length * 2);
    for (byte x : b) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }

  static byte[] bytes(ByteBuffer bb) {
    ByteBuffer d = bb.duplicate();
    byte[] b = new byte[d.remaining()];
    d.get(b);
    return b;
  }

  static boolean v5() {
    return version.startsWith("5");
  }

  /** A protocol class by its path below .../protocol/ (4.x: common.protocol, 5.x: remoting.protocol). */
  static Class<?> pcls(String rel) throws ClassNotFoundException {
    try {
      return Class.forName("org.apache.rocketmq.remoting.protocol." + rel);
    } catch (ClassNotFoundException e) {
      try {
        return Class.forName("org.apache.rocketmq.common.protocol." + rel);
      } catch (ClassNotFoundException e2) {
        return Class.forName("org.apache.rocketmq.common." + rel); // 4.x admin classes
      }
    }
  }

  static Object newp(String rel) throws Exception {
    return pcls(rel).getDeclaredConstructor().newInstance();
  }

  static Field field(Class<?> c, String name) {
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      try {
        Field f = k.getDeclaredField(name);
        f.setAccessible(true);
        return f;
      } catch (NoSuchFieldException e) {
        // keep looking in the superclass
      }
    }
    return null;
  }

  static void set(Object o, String name, Object v) throws Exception {
    Field f = field(o.getClass(), name);
    if (f == null) throw new NoSuchFieldException(o.getClass().getName() + "." + name);
    f.set(o, v);
  }

  /** Sets a field that exists only in some versions; returns whether it exists. */
  static boolean setOpt(Object o, String name, Object v) throws Exception {
    Field f = field(o.getClass(), name);
    if (f == null) return false;
    f.set(o, v);
    return true;
  }

  @SuppressWarnings("unchecked")
  static Object enumValue(String rel, String name) throws Exception {
    Class c = pcls(rel);
    return Enum.valueOf(c, name);
  }

  // ---------------------------------------------------------------- frames

  /** The bytes Java's Netty pipeline puts on the wire for this command (NettyEncoder). */
  static byte[] wire(RemotingCommand cmd) {
    EmbeddedChannel ch = new EmbeddedChannel(new NettyEncoder());
    ch.writeOutbound(cmd);
    ByteBuf b = ch.readOutbound();
    byte[] r = new byte[b.readableBytes()];
    b.readBytes(r);
    b.release();
    ch.finishAndReleaseAll();
    return r;
  }

  static Integer tableLength(Map<String, String> m) {
    if (m == null) return null;
    try {
      Field f = HashMap.class.getDeclaredField("table");
      f.setAccessible(true); // needs --add-opens java.base/java.util=ALL-UNNAMED
      Object[] t = (Object[]) f.get(m);
      return t == null ? 0 : t.length;
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  static byte[] classicEncode(RemotingCommand cmd) {
    return bytes(cmd.encode());
  }

  /** Ext fields in the order they appear in the encoded header, as [key, value] pairs. */
  static JSONArray wireExtOrder(byte[] frame) {
    JSONArray pairs = new JSONArray();
    int info = ByteBuffer.wrap(frame, 4, 4).getInt();
    int type = (info >>> 24) & 0xff;
    int hl = info & 0xffffff;
    if (type == 0) {
      JSONObject h = JSON.parseObject(new String(frame, 8, hl, StandardCharsets.UTF_8), Feature.OrderedField);
      JSONObject ext = h.getJSONObject("extFields");
      if (ext != null) for (Map.Entry<String, Object> e : ext.entrySet()) pairs.add(Arrays.asList(e.getKey(), String.valueOf(e.getValue())));
    } else {
      ByteBuffer b = ByteBuffer.wrap(frame, 8, hl).slice();
      b.position(13);
      int rl = b.getInt();
      b.position(b.position() + rl);
      int el = b.getInt();
      int end = b.position() + el;
      while (b.position() < end) {
        byte[] k = new byte[b.getShort()];
        b.get(k);
        byte[] v = new byte[b.getInt()];
        b.get(v);
        pairs.add(Arrays.asList(new String(k, StandardCharsets.UTF_8), new String(v, StandardCharsets.UTF_8)));
      }
    }
    return pairs;
  }

  static JSONObject decoded(byte[] frame) throws Exception {
    ByteBuffer bb = ByteBuffer.wrap(frame, 4, frame.length - 4).slice();
    RemotingCommand d;
    try {
      Method m = RemotingCommand.class.getMethod("decode", ByteBuffer.class);
      d = (RemotingCommand) m.invoke(null, bb);
    } catch (NoSuchMethodException e) {
      Method m = RemotingCommand.class.getMethod("decode", byte[].class);
      d = (RemotingCommand) m.invoke(null, (Object) bytes(bb));
    }
    JSONObject o = obj();
    o.put("code", d.getCode());
    o.put("language", d.getLanguage() == null ? null : d.getLanguage().name());
    o.put("version", d.getVersion());
    o.put("opaque", d.getOpaque());
    o.put("flag", d.getFlag());
    o.put("remark", d.getRemark());
    o.put("serializeType", d.getSerializeTypeCurrentRPC().name());
    if (d.getExtFields() == null) {
      o.put("extFields", null);
    } else {
      JSONObject ext = obj();
      new java.util.TreeMap<>(d.getExtFields()).forEach(ext::put);
      o.put("extFields", ext);
    }
    o.put("bodyHex", d.getBody() == null ? null : hex(d.getBody()));
    return o;
  }

  static void frame(JSONArray list, String name, String description, Supplier<RemotingCommand> make) throws Exception {
    for (SerializeType st : new SerializeType[] {SerializeType.JSON, SerializeType.ROCKETMQ}) {
      RemotingCommand cmd = make.get();
      cmd.setSerializeTypeCurrentRPC(st);
      byte[] w = wire(cmd);
      RemotingCommand again = make.get();
      again.setSerializeTypeCurrentRPC(st);
      byte[] classic = classicEncode(again);
      JSONObject v = obj();
      v.put("name", name + (st == SerializeType.JSON ? ".json" : ".rocketmq"));
      v.put("description", description);
      v.put("serializeType", st.name());
      v.put("hex", hex(w));
      if (!Arrays.equals(w, classic)) {
        v.put("classicEncodeHex", hex(classic));
        v.put("note", "RemotingCommand.encode() differs from what NettyEncoder writes (fast header path); hex is the wire form");
      }
      JSONObject in = obj();
      in.put("code", cmd.getCode());
      in.put("language", cmd.getLanguage().name());
      in.put("version", cmd.getVersion());
      in.put("opaque", cmd.getOpaque());
      in.put("flag", cmd.getFlag());
      in.put("remark", cmd.getRemark());
      in.put("extFields", wireExtOrder(w));
      // the HashMap's bucket count decides fastjson's key order (4.x starts at 16; 5.x addExtField at 256)
      in.put("extFieldsTableLength", tableLength(cmd.getExtFields()));
      in.put("bodyHex", cmd.getBody() == null ? null : hex(cmd.getBody()));
      v.put("fields", in);
      v.put("decoded", decoded(w));
      list.add(v);
    }
  }

  static RemotingCommand request(int code, CommandCustomHeader h, int opaque) {
    RemotingCommand c = RemotingCommand.createRequestCommand(code, h);
    c.setOpaque(opaque);
    c.setVersion(MQVersion.CURRENT_VERSION);
    c.setLanguage(LanguageCode.JAVA);
    return c;
  }

  static RemotingCommand response(int code, String remark, int opaque) {
    RemotingCommand c = RemotingCommand.createResponseCommand(code, remark);
    c.setOpaque(opaque);
    c.setVersion(MQVersion.CURRENT_VERSION);
    return c;
  }

  interface Maker {
    RemotingCommand make() throws Exception;
  }

  static Supplier<RemotingCommand> s(Maker m) {
    return () -> {
      try {
        return m.make();
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    };
  }

  static final String PROPS = "TAGS\u0001TagA\u0002KEYS\u0001order-1 order-2\u0002UNIQ_KEY\u00017F00000100002A9F0000000000000001\u0002WAIT\u0001true\u0002";
  static final String NASTY = "ctl:\u0000\u0001\u0002\u0007\b\t\n\u000b\f\r\u001b\u001f quote:\" backslash:\\ slash:/ del:\u007f latin:\u00e9 cjk:\u4e2d\u6587 emoji:\ud83d\ude00 ls:\u2028 ps:\u2029 bom:\ufeff nbsp:\u00a0 c1:\u0085 <tag>&'";

  static JSONArray frames() throws Exception {
    JSONArray list = new JSONArray();
    frame(list, "get-routeinfo-request", "GET_ROUTEINFO_BY_TOPIC (105) to the name server, topic TopicTest", s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.namesrv.GetRouteInfoRequestHeader");
      set(h, "topic", "TopicTest");
      return request(105, h, 1);
    }));
    frame(list, "pull-request", "PULL_MESSAGE (11) with every PullMessageRequestHeader field set" + (v5() ? " (5.x: plus maxMsgBytes, requestSource, bname)" : ""), s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.PullMessageRequestHeader");
      set(h, "consumerGroup", "cg1");
      set(h, "topic", "TopicTest");
      set(h, "queueId", 3);
      set(h, "queueOffset", 123456789012L);
      set(h, "maxMsgNums", 32);
      set(h, "sysFlag", 7);
      set(h, "commitOffset", 123456789000L);
      set(h, "suspendTimeoutMillis", 15000L);
      set(h, "subscription", "TagA || TagB");
      set(h, "subVersion", 1712345678000L);
      set(h, "expressionType", "TAG");
      setOpt(h, "maxMsgBytes", 1048576);
      setOpt(h, "requestSource", 0);
      setOpt(h, "bname", "broker-a");
      return request(11, h, 42);
    }));
    frame(list, "pull-request-minimal", "PULL_MESSAGE (11) with only the required fields (no subscription, no expression type)", s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.PullMessageRequestHeader");
      set(h, "consumerGroup", "cg1");
      set(h, "topic", "TopicTest");
      set(h, "queueId", 0);
      set(h, "queueOffset", 0L);
      set(h, "maxMsgNums", 32);
      set(h, "sysFlag", 2);
      set(h, "commitOffset", 0L);
      set(h, "suspendTimeoutMillis", 15000L);
      set(h, "subVersion", 0L);
      return request(11, h, 43);
    }));
    frame(list, "pull-response-found", "PULL_MESSAGE response SUCCESS (0), remark FOUND, PullMessageResponseHeader, body = one stored message", s(() -> {
      RemotingCommand c = RemotingCommand.createResponseCommand((Class) pcls("header.PullMessageResponseHeader"));
      CommandCustomHeader h = c.readCustomHeader();
      set(h, "suggestWhichBrokerId", 0L);
      set(h, "nextBeginOffset", 124L);
      set(h, "minOffset", 0L);
      set(h, "maxOffset", 124L);
      setOpt(h, "topicSysFlag", 0);
      setOpt(h, "groupSysFlag", 0);
      c.setCode(0);
      c.setRemark("FOUND");
      c.setOpaque(42);
      c.setVersion(MQVersion.CURRENT_VERSION);
      c.setBody(simpleRecord());
      return c;
    }));
    frame(list, "pull-response-not-found", "PULL_MESSAGE response PULL_NOT_FOUND (19), remark with a long-poll text", s(() -> {
      RemotingCommand c = RemotingCommand.createResponseCommand((Class) pcls("header.PullMessageResponseHeader"));
      CommandCustomHeader h = c.readCustomHeader();
      set(h, "suggestWhichBrokerId", 1L);
      set(h, "nextBeginOffset", 9007199254740993L);
      set(h, "minOffset", 5L);
      set(h, "maxOffset", 9007199254740993L);
      c.setCode(19);
      c.setRemark("OFFSET_FOUND_NULL");
      c.setOpaque(44);
      c.setVersion(MQVersion.CURRENT_VERSION);
      return c;
    }));
    frame(list, "send-message-v2", "SEND_MESSAGE_V2 (310): short-named header, properties with \\u0001/\\u0002 separators, body", s(() -> {
      Object v1 = newp("header.SendMessageRequestHeader");
      set(v1, "producerGroup", "pg1");
      set(v1, "topic", "TopicTest");
      set(v1, "defaultTopic", "TBW102");
      set(v1, "defaultTopicQueueNums", 4);
      set(v1, "queueId", 1);
      set(v1, "sysFlag", 0);
      set(v1, "bornTimestamp", 1712345678901L);
      set(v1, "flag", 0);
      set(v1, "properties", PROPS);
      set(v1, "reconsumeTimes", 0);
      set(v1, "unitMode", false);
      set(v1, "batch", false);
      setOpt(v1, "bname", "broker-a");
      Class<?> v2c = pcls("header.SendMessageRequestHeaderV2");
      CommandCustomHeader h = (CommandCustomHeader) v2c.getMethod("createSendMessageRequestHeaderV2", v1.getClass()).invoke(null, v1);
      RemotingCommand c = request(310, h, 7);
      c.setBody("Hello RocketMQ".getBytes(StandardCharsets.UTF_8));
      return c;
    }));
    frame(list, "send-response", "SEND_MESSAGE response SUCCESS with SendMessageResponseHeader (msgId, queueId, queueOffset) plus MSG_REGION/TRACE_ON", s(() -> {
      RemotingCommand c = RemotingCommand.createResponseCommand((Class) pcls("header.SendMessageResponseHeader"));
      CommandCustomHeader h = c.readCustomHeader();
      set(h, "msgId", "7F00000100002A9F0000000000000ABC");
      set(h, "queueId", 1);
      set(h, "queueOffset", 17L);
      setOpt(h, "transactionId", null);
      c.addExtField("MSG_REGION", "DefaultRegion");
      c.addExtField("TRACE_ON", "true");
      c.setCode(0);
      c.setOpaque(7);
      c.setVersion(MQVersion.CURRENT_VERSION);
      return c;
    }));
    frame(list, "query-consumer-offset", "QUERY_CONSUMER_OFFSET (14)", s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.QueryConsumerOffsetRequestHeader");
      set(h, "consumerGroup", "cg1");
      set(h, "topic", "TopicTest");
      set(h, "queueId", 2);
      setOpt(h, "bname", "broker-a");
      return request(14, h, 100);
    }));
    frame(list, "query-consumer-offset-response", "QUERY_CONSUMER_OFFSET response with offset", s(() -> {
      RemotingCommand c = RemotingCommand.createResponseCommand((Class) pcls("header.QueryConsumerOffsetResponseHeader"));
      CommandCustomHeader h = c.readCustomHeader();
      set(h, "offset", 4096L);
      c.setCode(0);
      c.setOpaque(100);
      c.setVersion(MQVersion.CURRENT_VERSION);
      return c;
    }));
    frame(list, "update-consumer-offset-oneway", "UPDATE_CONSUMER_OFFSET (15), oneway (flag 2)", s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.UpdateConsumerOffsetRequestHeader");
      set(h, "consumerGroup", "cg1");
      set(h, "topic", "TopicTest");
      set(h, "queueId", 0);
      set(h, "commitOffset", 18L);
      setOpt(h, "bname", "broker-a");
      RemotingCommand c = request(15, h, 77);
      c.markOnewayRPC();
      return c;
    }));
    frame(list, "heart-beat", "HEART_BEAT (34) without custom header, HeartbeatData JSON body", s(() -> {
      RemotingCommand c = request(34, null, 12);
      c.setBody(heartbeatJson());
      return c;
    }));
    if (v5()) {
      frame(list, "heart-beat-v5-header", "5.x only: HEART_BEAT as the 5.x client sends it, with an empty HeartbeatRequestHeader (extFields {})", s(() -> {
        RemotingCommand c = request(34, (CommandCustomHeader) newp("header.HeartbeatRequestHeader"), 18);
        c.setBody(heartbeatJson());
        return c;
      }));
    }
    frame(list, "heart-beat-response", "HEART_BEAT response SUCCESS, no remark, no ext fields", s(() -> response(0, null, 12)));
    frame(list, "response-with-remark", "a SUCCESS response whose remark is set", s(() -> response(0, "FOUND", 5)));
    frame(list, "error-response", "REQUEST_CODE_NOT_SUPPORTED (3) as the broker answers an unknown code", s(() -> response(3, " request type 999 not supported", 6)));
    frame(list, "system-error-response", "SYSTEM_ERROR (1) with a multi-line Java exception text as remark", s(() -> response(1, "java.lang.NullPointerException\n\tat org.apache.rocketmq.Foo.bar(Foo.java:42)\r\n\"quoted\"", -2)));
    frame(list, "escapes", "remark and ext values with control characters, quotes, backslash, DEL, C1, U+2028 and non-ASCII (pins fastjson's escaping)", s(() -> {
      RemotingCommand c = request(310, null, 8);
      c.setRemark(NASTY);
      c.addExtField("i", NASTY);
      c.addExtField("k\u00e9y\"\\", "v");
      c.addExtField("empty", "");
      return c;
    }));
    frame(list, "lone-surrogate", "a lone UTF-16 surrogate in remark and value: Java's UTF-8 encoder writes '?' for it", s(() -> {
      RemotingCommand c = request(310, null, 17);
      c.setRemark("a\ud800b");
      c.addExtField("s", "x\udc00y\ud83d");
      return c;
    }));
    frame(list, "all-controls", "ext value holding every character U+0000..U+00FF", s(() -> {
      StringBuilder sb = new StringBuilder();
      for (char ch = 0; ch < 256; ch++) sb.append(ch);
      RemotingCommand c = request(310, null, 9);
      c.addExtField("all", sb.toString());
      return c;
    }));
    frame(list, "many-ext-fields", "20 ext fields (HashMap resized from 16 to 32 buckets: iteration order by bucket)", s(() -> {
      RemotingCommand c = request(999, null, 10);
      for (String k : MANY_KEYS) c.addExtField(k, "v-" + k);
      return c;
    }));
    frame(list, "colliding-ext-keys", "ext keys with equal Java hashes (Aa/BB, AaAa/BBBB/AaBB/BBAa) keep insertion order inside their bucket", s(() -> {
      RemotingCommand c = request(999, null, 11);
      for (String k : new String[] {"BB", "Aa", "AaAa", "BBBB", "AaBB", "BBAa", "topic", "queueId"}) c.addExtField(k, k.toLowerCase());
      return c;
    }));
    frame(list, "binary-body", "a request whose body holds every byte value 0..255", s(() -> {
      RemotingCommand c = request(36, null, 13);
      byte[] b = new byte[256];
      for (int i = 0; i < 256; i++) b[i] = (byte) i;
      c.setBody(b);
      return c;
    }));
    frame(list, "negative-opaque-big-code", "opaque -2147483648, code 200050 (a 5.x POP code: wraps to int16 in ROCKETMQ headers), version 0, language OTHER, flags 3", s(() -> {
      RemotingCommand c = request(200050, null, Integer.MIN_VALUE);
      c.setVersion(0);
      c.setLanguage(LanguageCode.OTHER);
      c.setFlag(3);
      return c;
    }));
    frame(list, "empty-remark", "response with an empty (not null) remark and an empty ext value", s(() -> {
      RemotingCommand c = response(0, "", 14);
      c.addExtField("a", "");
      c.addExtField("b", "x");
      return c;
    }));
    frame(list, "get-consumer-list", "GET_CONSUMER_LIST_BY_GROUP (38)", s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.GetConsumerListByGroupRequestHeader");
      set(h, "consumerGroup", "cg1");
      return request(38, h, 15);
    }));
    frame(list, "consumer-send-msg-back", "CONSUMER_SEND_MSG_BACK (36)", s(() -> {
      CommandCustomHeader h = (CommandCustomHeader) newp("header.ConsumerSendMsgBackRequestHeader");
      set(h, "offset", 4242L);
      set(h, "group", "cg1");
      set(h, "delayLevel", 0);
      set(h, "originMsgId", "7F00000100002A9F0000000000001092");
      set(h, "originTopic", "TopicTest");
      set(h, "unitMode", false);
      set(h, "maxReconsumeTimes", 16);
      setOpt(h, "bname", "broker-a");
      return request(36, h, 16);
    }));
    return list;
  }

  static final String[] MANY_KEYS = {
    "consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset",
    "suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "bname", "a", "b", "c",
    "zz", "key16", "key17", "MSG_REGION", "TRACE_ON",
  };

  // ---------------------------------------------------------------- headers Java did not write

  static byte[] frameOf(int type, byte[] header) {
    ByteBuffer b = ByteBuffer.allocate(8 + header.length);
    b.putInt(4 + header.length);
    b.putInt((type << 24) | header.length);
    b.put(header);
    return b.array();
  }

  static byte[] unhex(String h) {
    byte[] b = new byte[h.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    return b;
  }

  static void decodeCase(JSONArray list, String name, String description, byte[] frame) {
    JSONObject v = obj();
    v.put("name", name);
    v.put("description", description);
    v.put("hex", hex(frame));
    try {
      v.put("decoded", decoded(frame));
    } catch (Throwable e) {
      Throwable c = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
      v.put("javaError", c.getClass().getName() + ": " + c.getMessage());
    }
    list.add(v);
  }

  static byte[] json(String s) {
    return frameOf(0, s.getBytes(StandardCharsets.UTF_8));
  }

  /** A ROCKETMQ header with the given remark bytes and raw ext section. */
  static byte[] binary(int code, int lang, int version, byte[] remark, byte[] ext) {
    ByteBuffer b = ByteBuffer.allocate(21 + remark.length + ext.length);
    b.putShort((short) code);
    b.put((byte) lang);
    b.putShort((short) version);
    b.putInt(5);
    b.putInt(0);
    b.putInt(remark.length);
    b.put(remark);
    b.putInt(ext.length);
    b.put(ext);
    return frameOf(1, b.array());
  }

  static byte[] entry(byte[] k, byte[] v) {
    ByteBuffer b = ByteBuffer.allocate(6 + k.length + v.length);
    b.putShort((short) k.length);
    b.put(k);
    b.putInt(v.length);
    b.put(v);
    return b.array();
  }

  static byte[] cat(byte[]... parts) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : parts) o.write(p, 0, p.length);
    return o.toByteArray();
  }

  static byte[] u8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] prefix(int total, int info) {
    return ByteBuffer.allocate(8).putInt(total).putInt(info).array();
  }

  /** Feeds bytes to Java's own NettyDecoder and records whether the channel survives. */
  static void limit(JSONArray list, String name, String description, byte[] bytes) {
    EmbeddedChannel ch = new EmbeddedChannel(new org.apache.rocketmq.remoting.netty.NettyDecoder());
    int frames = 0;
    String error = null;
    try {
      ch.writeInbound(io.netty.buffer.Unpooled.wrappedBuffer(bytes));
      Object m;
      while ((m = ch.readInbound()) != null) frames++;
    } catch (Throwable e) {
      error = e.getClass().getName() + ": " + e.getMessage();
    }
    JSONObject v = obj();
    v.put("name", name);
    v.put("description", description);
    v.put("hex", hex(bytes));
    v.put("frames", frames);
    v.put("channelOpen", ch.isOpen());
    if (error != null) v.put("javaError", error);
    ch.finishAndReleaseAll();
    list.add(v);
  }

  static JSONArray frameLimits() throws Exception {
    JSONArray list = new JSONArray();
    byte[] good = wire(request(105, null, 1));
    limit(list, "good-frame", "a complete valid frame", good);
    limit(list, "exactly-16-mib-prefix", "length 16777212 (the frame is exactly 16 MiB with its prefix): only the 8 prefix bytes sent", prefix(16777212, 0));
    limit(list, "one-over-16-mib-prefix", "length 16777213: only the 8 prefix bytes sent", prefix(16777213, 0));
    limit(list, "one-over-16-mib-length-only", "length 16777213: only the 4 length bytes sent", Arrays.copyOf(prefix(16777213, 0), 4));
    limit(list, "int-max-prefix", "length 0x7fffffff", prefix(0x7fffffff, 0));
    limit(list, "negative-prefix", "length 0x80000000 (-2 GiB)", prefix(0x80000000, 0));
    limit(list, "length-3", "length 3 followed by 3 bytes", cat(Arrays.copyOf(prefix(3, 0), 4), new byte[3]));
    limit(list, "serialize-type-2", "a whole frame whose serialize type byte is 2", cat(prefix(6, (2 << 24) | 2), u8("{}")));
    limit(list, "header-longer-than-frame", "a whole frame whose header length (20) exceeds the frame (6)", cat(prefix(6, 20), u8("{}")));
    limit(list, "two-good-frames", "two valid frames in one read", cat(good, good));
    return list;
  }

  static JSONArray decodeCases() {
    JSONArray list = new JSONArray();
    decodeCase(list, "json-digit-strings", "int fields given as strings of digits", json("{\"code\":\"11\",\"flag\":\"2\",\"opaque\":\"-7\",\"version\":\"409\",\"language\":\"JAVA\"}"));
    decodeCase(list, "json-language-ordinal", "language given as its ordinal", json("{\"code\":11,\"language\":9,\"opaque\":3}"));
    decodeCase(list, "json-language-unknown", "a language name Java does not know", json("{\"code\":11,\"language\":\"COBOL\",\"opaque\":3}"));
    decodeCase(list, "json-whitespace-unknown-keys", "whitespace between tokens, unknown keys, serializeTypeCurrentRPC saying ROCKETMQ", json(" {\n \"code\" : 11 ,\t\"foo\":[1,{\"x\":2}], \"serializeTypeCurrentRPC\":\"ROCKETMQ\", \"opaque\":4, \"flag\":0, \"version\":1, \"language\":\"GO\" }\r\n"));
    decodeCase(list, "json-ext-non-string-values", "ext values that are numbers, booleans, null, an object and an array", json("{\"code\":11,\"opaque\":5,\"extFields\":{\"n\":5,\"b\":true,\"z\":null,\"o\":{\"a\":1},\"arr\":[1,2],\"d\":1.5,\"s\":\"x\"}}"));
    decodeCase(list, "json-escapes", "\\u escapes (lower-case hex, a surrogate pair), \\/ and raw UTF-8 in strings", json("{\"code\":11,\"opaque\":6,\"remark\":\"\\u00e9\\u00E9\\/\\ud83d\\ude00\u00e9\",\"extFields\":{\"k\\u0001\":\"v\\u0002\"}}"));
    decodeCase(list, "json-null-remark-and-ext", "remark and extFields given as null", json("{\"code\":11,\"opaque\":7,\"remark\":null,\"extFields\":null}"));
    decodeCase(list, "json-duplicate-keys", "code given twice, ext key given twice", json("{\"code\":1,\"code\":2,\"opaque\":8,\"extFields\":{\"a\":\"1\",\"a\":\"2\"}}"));
    decodeCase(list, "json-integral-double", "code written as 11.0", json("{\"code\":11.0,\"opaque\":9}"));
    decodeCase(list, "json-invalid-utf8", "malformed UTF-8 inside a JSON string (lone continuation, truncated sequences, encoded surrogate, overlong, 0xFF)",
        frameOf(0, cat(u8("{\"code\":11,\"opaque\":10,\"remark\":\"a"), unhex("80c328e282f09f98eda080c0afff"), u8("z\"}"))));
    decodeCase(list, "json-int-overflow", "opaque 2147483648 (one past int32)", json("{\"code\":11,\"opaque\":2147483648}"));
    decodeCase(list, "json-exponent", "flag written as 1e1", json("{\"code\":11,\"opaque\":12,\"flag\":1e1}"));
    decodeCase(list, "json-fraction", "code written as 11.5", json("{\"code\":11.5,\"opaque\":13}"));
    decodeCase(list, "json-boolean-code", "code written as true", json("{\"code\":true,\"opaque\":14}"));
    decodeCase(list, "json-truncated", "a JSON header cut short", json("{\"code\":11,\"opaque\":"));
    decodeCase(list, "rocketmq-duplicate-ext-key", "ROCKETMQ ext section with a key given twice", binary(11, 0, 409, new byte[0], cat(entry(u8("a"), u8("1")), entry(u8("a"), u8("2")), entry(u8("b"), u8("3")))));
    decodeCase(list, "rocketmq-empty-value", "ROCKETMQ ext entry with an empty value and an empty remark", binary(11, 0, 409, new byte[0], cat(entry(u8("a"), new byte[0]), entry(u8("b"), u8("x")))));
    decodeCase(list, "rocketmq-negative-shorts", "code and version with the sign bit set, unknown language byte", binary(-2, 99, -3, u8("r"), new byte[0]));
    decodeCase(list, "rocketmq-invalid-utf8", "malformed UTF-8 in remark, key and value", binary(11, 0, 409, unhex("61eda080c3"), entry(unhex("6bff"), unhex("f09f98"))));
    decodeCase(list, "rocketmq-remark-too-long", "remark length larger than the header", frameOf(1, unhex("000b000199000000050000000000000064000000")));
    return list;
  }

  // ---------------------------------------------------------------- stored messages

  static byte[] zlib(byte[] in) {
    Deflater d = new Deflater(5);
    d.setInput(in);
    d.finish();
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    byte[] buf = new byte[4096];
    while (!d.finished()) o.write(buf, 0, d.deflate(buf));
    d.end();
    return o.toByteArray();
  }

  static int crc(byte[] b) {
    CRC32 c = new CRC32();
    c.update(b);
    return (int) (c.getValue() & 0x7FFFFFFF);
  }

  static String propsString(String[][] pairs) {
    StringBuilder sb = new StringBuilder();
    for (String[] p : pairs) sb.append(p[0]).append('\u0001').append(p[1]).append('\u0002');
    return sb.toString();
  }

  /**
   * A commit-log record laid out field by field (MessageDecoder.encode cannot write v2 records or
   * arbitrary hosts in every version, so the layout is written here and then read back by Java's
   * own decoder, whose view is what the sidecar records).
   */
  static byte[] record(int magic, String topic, int queueId, int flag, long queueOffset, long physicalOffset,
      int sysFlag, long bornTs, InetSocketAddress born, long storeTs, InetSocketAddress store, int reconsume,
      long prepared, byte[] storedBody, String props) {
    byte[] t = topic.getBytes(StandardCharsets.UTF_8);
    byte[] p = props.getBytes(StandardCharsets.UTF_8);
    byte[] bh = born.getAddress().getAddress();
    byte[] sh = store.getAddress().getAddress();
    int tl = magic == 0xDAA320AB ? 2 : 1;
    int size = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + bh.length + 4 + 8 + sh.length + 4 + 4 + 8 + 4 + storedBody.length + tl + t.length + 2 + p.length;
    ByteBuffer b = ByteBuffer.allocate(size);
    b.putInt(size);
    b.putInt(magic);
    b.putInt(crc(storedBody));
    b.putInt(queueId);
    b.putInt(flag);
    b.putLong(queueOffset);
    b.putLong(physicalOffset);
    b.putInt(sysFlag);
    b.putLong(bornTs);
    b.put(bh);
    b.putInt(born.getPort());
    b.putLong(storeTs);
    b.put(sh);
    b.putInt(store.getPort());
    b.putInt(reconsume);
    b.putLong(prepared);
    b.putInt(storedBody.length);
    b.put(storedBody);
    if (tl == 2) b.putShort((short) t.length); else b.put((byte) t.length);
    b.put(t);
    b.putShort((short) p.length);
    b.put(p);
    return b.array();
  }

  static InetSocketAddress addr(String ip, int port) throws Exception {
    return new InetSocketAddress(InetAddress.getByName(ip), port);
  }

  static byte[] simpleRecord() throws Exception {
    return record(0xDAA320A7, "TopicTest", 3, 0, 123, 4096, 0, 1712345678901L, addr("192.168.1.10", 53211),
        1712345678950L, addr("192.168.1.20", 10911), 0, 0, "Hello RocketMQ".getBytes(StandardCharsets.UTF_8),
        propsString(new String[][] {{"TAGS", "TagA"}, {"KEYS", "order-1"}, {"UNIQ_KEY", "C0A8010A1F8B18B4AAC2000000000001"}, {"WAIT", "true"}, {"CLUSTER", "DefaultCluster"}}));
  }

  static byte[] javaEncoded(String born, String store, int sysFlag) throws Exception {
    MessageExt m = new MessageExt();
    m.setTopic("TopicTest");
    m.setQueueId(2);
    m.setFlag(9);
    m.setQueueOffset(77L);
    m.setCommitLogOffset(123456789L);
    m.setSysFlag(sysFlag);
    m.setBornTimestamp(1712345600000L);
    m.setBornHost(addr(born, 41000));
    m.setStoreTimestamp(1712345600005L);
    m.setStoreHost(addr(store, 10911));
    m.setReconsumeTimes(1);
    m.setPreparedTransactionOffset(0L);
    byte[] body = "encoded by Java".getBytes(StandardCharsets.UTF_8);
    m.setBody(body);
    m.setBodyCRC(crc(body));
    m.putUserProperty("k1", "v1");
    m.setTags("TagA");
    m.setKeys("key-a");
    org.apache.rocketmq.common.message.MessageAccessor.putProperty(m, "UNIQ_KEY", "C0A8010A1F8B18B4AAC2000000000099");
    return MessageDecoder.encode(m, false);
  }

  static byte[] withInt(byte[] rec, int pos, int value) {
    byte[] c = rec.clone();
    ByteBuffer.wrap(c).putInt(pos, value);
    return c;
  }

  static void damaged(JSONArray list, String name, String description, int goodRecords, byte[]... records) throws Exception {
    byte[] body = cat(records);
    JSONObject v = obj();
    v.put("name", name);
    v.put("description", description);
    v.put("hex", hex(body));
    v.put("records", records.length);
    v.put("goodRecords", goodRecords);
    try {
      JSONArray ds = new JSONArray();
      for (MessageExt m : MessageDecoder.decodes(ByteBuffer.wrap(body))) ds.add(javaView(m));
      v.put("decodedList", ds);
    } catch (Throwable e) {
      v.put("javaError", e.getClass().getName() + ": " + e.getMessage());
    }
    list.add(v);
  }

  /** Pull bodies with one damaged record after a good one, as MessageDecoder.decodes sees them. */
  static JSONArray damagedBodies() throws Exception {
    JSONArray list = new JSONArray();
    byte[] good = simpleRecord();
    damaged(list, "unknown-magic", "a good record, then one whose magic code is 0x12345678", 1, good, withInt(good, 4, 0x12345678));
    damaged(list, "blank-magic", "a good record, then one with the commit log's BLANK magic (never sent in pull bodies)", 1, good, withInt(good, 4, 0xCBD43194));
    damaged(list, "truncated", "a good record, then the first 60 bytes of another", 1, good, Arrays.copyOf(good, 60));
    damaged(list, "negative-body-length", "a good record, then one whose body length is -1", 1, good, withInt(good, 84, -1));
    damaged(list, "size-too-small", "a good record whose TOTALSIZE says 20", 0, withInt(good, 0, 20));
    StringBuilder t = new StringBuilder();
    while (t.length() < 200) t.append("long-topic-name-");
    damaged(list, "v2-record", "a magic v2 record (2-byte topic length, 200-byte topic) after a good v1 record: 5.x reads it, 4.9 does not know v2", 2, good,
        record(0xDAA320AB, t.toString(), 0, 0, 1, 80000, 0, 1712345600000L, addr("192.168.1.10", 3), 1712345600001L,
            addr("192.168.1.20", 10911), 0, 0, "v2".getBytes(StandardCharsets.UTF_8), ""));
    return list;
  }

  static JSONObject javaView(MessageExt m) throws Exception {
    JSONObject o = obj();
    o.put("topic", m.getTopic());
    o.put("queueId", m.getQueueId());
    o.put("flag", m.getFlag());
    o.put("queueOffset", String.valueOf(m.getQueueOffset()));
    o.put("commitLogOffset", String.valueOf(m.getCommitLogOffset()));
    o.put("sysFlag", m.getSysFlag());
    o.put("bornTimestamp", String.valueOf(m.getBornTimestamp()));
    InetSocketAddress bh = (InetSocketAddress) m.getBornHost();
    o.put("bornHostAddress", bh.getAddress().getHostAddress());
    o.put("bornHostPort", bh.getPort());
    o.put("storeTimestamp", String.valueOf(m.getStoreTimestamp()));
    InetSocketAddress sh = (InetSocketAddress) m.getStoreHost();
    o.put("storeHostAddress", sh.getAddress().getHostAddress());
    o.put("storeHostPort", sh.getPort());
    o.put("reconsumeTimes", m.getReconsumeTimes());
    o.put("preparedTransactionOffset", String.valueOf(m.getPreparedTransactionOffset()));
    o.put("bodyCRC", m.getBodyCRC());
    o.put("storeSize", m.getStoreSize());
    JSONObject props = obj();
    if (m.getProperties() != null) new java.util.TreeMap<>(m.getProperties()).forEach(props::put);
    o.put("properties", m.getProperties() == null ? null : props);
    o.put("bodyHex", m.getBody() == null ? null : hex(m.getBody()));
    o.put("msgId", m.getMsgId());
    Method om = null;
    try {
      om = m.getClass().getMethod("getOffsetMsgId");
    } catch (NoSuchMethodException e) {
      // plain MessageExt: msgId is the offset id
    }
    o.put("offsetMsgId", om != null ? om.invoke(m) : m.getMsgId());
    o.put("tags", m.getTags());
    o.put("keys", m.getKeys());
    return o;
  }

  static MessageExt clientDecode(byte[] rec) throws Exception {
    ByteBuffer bb = ByteBuffer.wrap(rec);
    // decode(byteBuffer, readBody, deCompressBody, isClient): the client's view (MessageClientExt)
    return MessageDecoder.decode(bb, true, true, true);
  }

  static void message(JSONArray list, String name, String description, byte[] rec) throws Exception {
    JSONObject v = obj();
    v.put("name", name);
    v.put("description", description);
    v.put("hex", hex(rec));
    MessageExt m = clientDecode(rec);
    if (m == null) throw new IllegalStateException("Java could not decode " + name);
    v.put("decoded", javaView(m));
    list.add(v);
  }

  static JSONArray messages() throws Exception {
    JSONArray list = new JSONArray();
    message(list, "simple-ipv4", "magic v1, IPv4 hosts, TAGS/KEYS/UNIQ_KEY/WAIT/CLUSTER properties (trailing \\u0002), small body", simpleRecord());

    StringBuilder big = new StringBuilder();
    for (int i = 0; i < 300; i++) big.append("line ").append(i).append(" of a compressible body\n");
    byte[] raw = big.toString().getBytes(StandardCharsets.UTF_8);
    message(list, "zlib-compressed", "sysFlag COMPRESSED (0x1), body stored as a zlib stream (level 5); Java decodes it inflated with the flag cleared; CRC over the stored bytes",
        record(0xDAA320A7, "TopicTest", 0, 0, 7, 8192, 0x1, 1712345600000L, addr("10.0.0.5", 40000), 1712345600100L,
            addr("10.0.0.1", 10911), 0, 0, zlib(raw), propsString(new String[][] {{"UNIQ_KEY", "0A0000059C40000000000000000000AA"}})));

    message(list, "ipv6-hosts", "sysFlag BORNHOST_V6 (0x10) | STOREHOSTADDRESS_V6 (0x20): 16-byte addresses, 56-char offset msgId",
        record(0xDAA320A7, "TopicTest", 1, 0, 9, 65536, 0x30, 1712345600000L, addr("2001:db8::10", 50000), 1712345600200L,
            addr("fe80::1:2:3:4", 10911), 0, 0, "v6".getBytes(StandardCharsets.UTF_8), propsString(new String[][] {{"TAGS", "TagB"}})));

    message(list, "ipv4-born-ipv6-store", "sysFlag 0x20 only: IPv4 born host, IPv6 store host",
        record(0xDAA320A7, "TopicTest", 1, 0, 10, 65600, 0x20, 1712345600000L, addr("127.0.0.1", 50001), 1712345600200L,
            addr("::1", 10911), 0, 0, "mixed".getBytes(StandardCharsets.UTF_8), propsString(new String[][] {{"TAGS", "TagC"}})));

    message(list, "no-properties-empty-body", "empty body, empty properties: msgId falls back to the offset msgId",
        record(0xDAA320A7, "T", 0, 0, 0, 0, 0, 0, addr("1.2.3.4", 1), 0, addr("5.6.7.8", 65535), 0, 0, new byte[0], ""));

    message(list, "retry-large-offsets", "%RETRY% topic with RETRY_TOPIC, reconsumeTimes 3, queue offset > 2^32, commit-log offset 2^52+5 (high word in use, still exact as a double), prepared offset, user flag, properties without trailing \\u0002",
        record(0xDAA320A7, "%RETRY%cg1", 0, 0x7fffffff, 4294967296L + 5, 4503599627370501L, 0, 1712345600000L,
            addr("192.168.1.10", 1), 1712345699999L, addr("192.168.1.20", 10911), 3, 123456789L,
            "retry me".getBytes(StandardCharsets.UTF_8),
            "RETRY_TOPIC\u0001TopicTest\u0002ORIGIN_MESSAGE_ID\u0001C0A8011400002A9F0000000000001234\u0002UNIQ_KEY\u0001C0A8010A1F8B18B4AAC2000000000002\u0002DELAY\u00013"));

    message(list, "utf8-topic-and-properties", "non-ASCII topic and property values, a value containing \\u0001, an empty-name segment and a short segment the parser drops",
        record(0xDAA320A7, "\u4e3b\u9898-\u00e9", 2, 1, 11, 70000, 0, 1712345600000L, addr("192.168.1.10", 2), 1712345600001L,
            addr("192.168.1.20", 10911), 0, 0, "\u00e9t\u00e9".getBytes(StandardCharsets.UTF_8),
            "TAGS\u0001\u6807\u7b7e\u0002weird\u0001a\u0001b\u0002\u0001nokey\u0002x\u0002KEYS\u0001k1 k2\u0002"));

    // Bodies compressed by RocketMQ's own compressors (CompressorFactory), flagged as a producer does:
    // COMPRESSED | CompressionType.getCompressionFlag() (bits 8-10: 1 LZ4, 2 ZSTD, 3 ZLIB).
    for (org.apache.rocketmq.common.compression.CompressionType ct : org.apache.rocketmq.common.compression.CompressionType.values()) {
      byte[] stored = org.apache.rocketmq.common.compression.CompressorFactory.getCompressor(ct).compress(raw, 5);
      int flag = 0x1 | ct.getCompressionFlag();
      message(list, ct.name().toLowerCase() + "-compressed-by-java", "body compressed by RocketMQ's " + ct.name() + " compressor (level 5), sysFlag 0x" + Integer.toHexString(flag),
          record(0xDAA320A7, "TopicTest", 0, 0, 8, 12288, flag, 1712345600000L, addr("10.0.0.5", 40000), 1712345600100L,
              addr("10.0.0.1", 10911), 0, 0, stored, propsString(new String[][] {{"UNIQ_KEY", "0A0000059C40000000000000000000B" + ct.getValue()}})));
    }

    message(list, "java-encoded-ipv4", "written by Java's own MessageDecoder.encode(MessageExt, false): IPv4 hosts, properties in the Message's HashMap order",
        javaEncoded("192.168.1.10", "192.168.1.20", 0));
    message(list, "java-encoded-ipv6", "written by Java's own MessageDecoder.encode(MessageExt, false) with IPv6 born and store hosts (sysFlag 0x30)",
        javaEncoded("2001:db8::10", "2001:db8::20", 0x30));

    if (v5()) {
      StringBuilder t = new StringBuilder("%RETRY%");
      while (t.length() < 200) t.append("long-group-name-");
      message(list, "magic-v2-long-topic", "5.x only: magic v2 (0xDAA320AB) with a 2-byte topic length, topic of " + t.length() + " bytes (> 127)",
          record(0xDAA320AB, t.toString(), 0, 0, 1, 80000, 0, 1712345600000L, addr("192.168.1.10", 3), 1712345600001L,
              addr("192.168.1.20", 10911), 1, 0, "v2".getBytes(StandardCharsets.UTF_8), propsString(new String[][] {{"RETRY_TOPIC", "TopicTest"}})));
    }

    // a whole pull body: several records back to back, decoded by MessageDecoder.decodes as a consumer does
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (int i = 0; i < list.size(); i++) {
      JSONObject o = list.getJSONObject(i);
      String n = o.getString("name");
      if (n.startsWith("magic-v2")) continue;
      String h = o.getString("hex");
      for (int k = 0; k < h.length(); k += 2) all.write(Integer.parseInt(h.substring(k, k + 2), 16));
    }
    byte[] body = all.toByteArray();
    JSONObject pull = obj();
    pull.put("name", "pull-body");
    pull.put("description", "the v1 records above concatenated, as a pull response body; decoded with MessageDecoder.decodes as the consumer does");
    pull.put("hex", hex(body));
    JSONArray ds = new JSONArray();
    for (MessageExt m : MessageDecoder.decodes(ByteBuffer.wrap(body))) ds.add(javaView(m));
    pull.put("decodedList", ds);
    JSONObject wrap = obj();
    wrap.put("records", list);
    wrap.put("pullBody", pull);
    wrap.put("damaged", damagedBodies());
    return new JSONArray(Arrays.asList(wrap));
  }

  // ---------------------------------------------------------------- batches

  static JSONArray batches() throws Exception {
    JSONArray list = new JSONArray();
    List<Message> msgs = new ArrayList<>();
    Message a = new Message("TopicTest", "TagA", "key-1", "first".getBytes(StandardCharsets.UTF_8));
    org.apache.rocketmq.common.message.MessageAccessor.putProperty(a, "UNIQ_KEY", "C0A8010A1F8B18B4AAC2000000000010");
    Message b = new Message("TopicTest", "TagB", "key-2 key-3", "second \u00e9".getBytes(StandardCharsets.UTF_8));
    b.setFlag(5);
    org.apache.rocketmq.common.message.MessageAccessor.putProperty(b, "UNIQ_KEY", "C0A8010A1F8B18B4AAC2000000000011");
    b.putUserProperty("custom", "x\u0001y");
    Message c = new Message("TopicTest", new byte[0]);
    msgs.add(a);
    msgs.add(b);
    msgs.add(c);
    JSONArray inputs = new JSONArray();
    for (Message m : msgs) {
      JSONObject o = obj();
      o.put("topic", m.getTopic());
      o.put("flag", m.getFlag());
      o.put("bodyHex", hex(m.getBody()));
      JSONArray pairs = new JSONArray();
      for (Map.Entry<String, String> e : m.getProperties().entrySet()) pairs.add(Arrays.asList(e.getKey(), e.getValue()));
      o.put("properties", pairs);
      o.put("propertiesString", MessageDecoder.messageProperties2String(m.getProperties()));
      inputs.add(o);
    }
    byte[] enc = MessageDecoder.encodeMessages(msgs);
    JSONObject v = obj();
    v.put("name", "three-messages");
    v.put("description", "MessageDecoder.encodeMessages of three messages (tags, keys, flag, a property with \\u0001, an empty body); properties listed in the Message's HashMap iteration order, which is the order they are written");
    v.put("hex", hex(enc));
    v.put("messages", inputs);
    JSONArray back = new JSONArray();
    for (Message m : MessageDecoder.decodeMessages(ByteBuffer.wrap(enc))) {
      JSONObject o = obj();
      o.put("flag", m.getFlag());
      o.put("bodyHex", hex(m.getBody()));
      JSONObject p = obj();
      new java.util.TreeMap<>(m.getProperties()).forEach(p::put);
      o.put("properties", p);
      back.add(o);
    }
    v.put("decoded", back);
    list.add(v);
    return list;
  }

  // ---------------------------------------------------------------- JSON bodies

  static byte[] heartbeatJson() throws Exception {
    return JSON.toJSONBytes(heartbeat());
  }

  static Object heartbeat() throws Exception {
    Object hb = newp("heartbeat.HeartbeatData");
    set(hb, "clientID", "192.168.1.10@12345#1712345678901234");
    Object cd = newp("heartbeat.ConsumerData");
    set(cd, "groupName", "cg1");
    set(cd, "consumeType", enumValue("heartbeat.ConsumeType", "CONSUME_PASSIVELY"));
    set(cd, "messageModel", enumValue("heartbeat.MessageModel", "CLUSTERING"));
    set(cd, "consumeFromWhere", org.apache.rocketmq.common.consumer.ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
    set(cd, "unitMode", false);
    Set<Object> subs = new LinkedHashSet<>();
    Object sd = newp("heartbeat.SubscriptionData");
    set(sd, "topic", "TopicTest");
    set(sd, "subString", "TagA || TagB");
    set(sd, "subVersion", 1712345678000L);
    set(sd, "expressionType", "TAG");
    set(sd, "tagsSet", new LinkedHashSet<>(Arrays.asList("TagA", "TagB")));
    set(sd, "codeSet", new LinkedHashSet<>(Arrays.asList("TagA".hashCode(), "TagB".hashCode())));
    subs.add(sd);
    Object rd = newp("heartbeat.SubscriptionData");
    set(rd, "topic", "%RETRY%cg1");
    set(rd, "subString", "*");
    set(rd, "subVersion", 1712345678001L);
    set(rd, "expressionType", "TAG");
    subs.add(rd);
    set(cd, "subscriptionDataSet", subs);
    Set<Object> cds = new LinkedHashSet<>();
    cds.add(cd);
    set(hb, "consumerDataSet", cds);
    Object pd = newp("heartbeat.ProducerData");
    set(pd, "groupName", "CLIENT_INNER_PRODUCER");
    Set<Object> pds = new LinkedHashSet<>();
    pds.add(pd);
    set(hb, "producerDataSet", pds);
    return hb;
  }

  static Object routeData() throws Exception {
    Object rd = newp("route.TopicRouteData");
    Object bd = newp("route.BrokerData");
    set(bd, "cluster", "DefaultCluster");
    set(bd, "brokerName", "broker-a");
    HashMap<Long, String> addrs = new HashMap<>();
    addrs.put(0L, "192.168.1.20:10911");
    addrs.put(1L, "192.168.1.21:10911");
    set(bd, "brokerAddrs", addrs);
    Object bd2 = newp("route.BrokerData");
    set(bd2, "cluster", "\u96c6\u7fa4");
    set(bd2, "brokerName", "broker-b");
    HashMap<Long, String> addrs2 = new HashMap<>();
    addrs2.put(0L, "192.168.1.30:10911");
    set(bd2, "brokerAddrs", addrs2);
    set(rd, "brokerDatas", new ArrayList<>(Arrays.asList(bd, bd2)));
    Object qd = newp("route.QueueData");
    set(qd, "brokerName", "broker-a");
    set(qd, "readQueueNums", 4);
    set(qd, "writeQueueNums", 4);
    set(qd, "perm", 6);
    set(qd, "topicSysFlag", 0);
    Object qd2 = newp("route.QueueData");
    set(qd2, "brokerName", "broker-b");
    set(qd2, "readQueueNums", 8);
    set(qd2, "writeQueueNums", 2);
    set(qd2, "perm", 4);
    set(qd2, "topicSysFlag", 0);
    set(rd, "queueDatas", new ArrayList<>(Arrays.asList(qd, qd2)));
    set(rd, "filterServerTable", new HashMap<String, List<String>>());
    return rd;
  }

  static void body(JSONArray list, String name, String description, String text, Object fields) {
    JSONObject v = obj();
    v.put("name", name);
    v.put("description", description);
    v.put("text", text);
    v.put("hex", hex(text.getBytes(StandardCharsets.UTF_8)));
    v.put("fields", fields);
    list.add(v);
  }

  static String toJson(Object o) throws Exception {
    // RemotingSerializable.toJson(obj, prettyFormat=false) in both versions
    Class<?> rs = Class.forName("org.apache.rocketmq.remoting.protocol.RemotingSerializable");
    return (String) rs.getMethod("toJson", Object.class, boolean.class).invoke(null, o, false);
  }

  static MessageQueue mq(String broker, int id) {
    return new MessageQueue("TopicTest", broker, id);
  }

  static JSONArray bodies() throws Exception {
    JSONArray list = new JSONArray();
    Object hb = heartbeat();
    body(list, "heartbeat-data", "HeartbeatData of a push consumer (clustering, TagA || TagB, the retry subscription, CLIENT_INNER_PRODUCER)" + (v5() ? "; 5.x adds heartbeatFingerprint and withoutSub" : ""), toJson(hb),
        JSON.parse(toJson(hb)));
    Object rd = routeData();
    String standard = new String(JSON.toJSONBytes(rd, SerializerFeature.BrowserCompatible, SerializerFeature.QuoteFieldNames,
        SerializerFeature.SkipTransientField, SerializerFeature.MapSortField), StandardCharsets.UTF_8);
    body(list, "topic-route-data-standard", "TopicRouteData as the name server sends it to clients with version >= V4_9_4 (BrowserCompatible, QuoteFieldNames, SkipTransientField, MapSortField)",
        standard, JSON.parse(standard));
    body(list, "topic-route-data-plain", "TopicRouteData as RemotingSerializable.toJson writes it (old clients): broker ids as unquoted numeric keys", toJson(rd), JSON.parse(standard));

    // 4.x keeps this body class among the headers
    Object cl;
    try {
      cl = newp("body.GetConsumerListByGroupResponseBody");
    } catch (ClassNotFoundException e) {
      cl = newp("header.GetConsumerListByGroupResponseBody");
    }
    set(cl, "consumerIdList", new ArrayList<>(Arrays.asList("192.168.1.10@12345#1712345678901234", "192.168.1.11@2222#1712345600000000")));
    body(list, "consumer-list", "GetConsumerListByGroupResponseBody", toJson(cl), JSON.parse(toJson(cl)));

    Object lb = newp("body.LockBatchRequestBody");
    set(lb, "consumerGroup", "cg1");
    set(lb, "clientId", "192.168.1.10@12345#1712345678901234");
    set(lb, "mqSet", new LinkedHashSet<>(Arrays.asList(mq("broker-a", 0), mq("broker-a", 1))));
    body(list, "lock-batch-request", "LockBatchRequestBody (mqSet of two queues)" + (v5() ? "; 5.x adds onlyThisBroker" : ""), toJson(lb), JSON.parse(toJson(lb)));

    Object lr = newp("body.LockBatchResponseBody");
    set(lr, "lockOKMQSet", new LinkedHashSet<>(Arrays.asList(mq("broker-a", 0))));
    body(list, "lock-batch-response", "LockBatchResponseBody", toJson(lr), JSON.parse(toJson(lr)));

    Object ub = newp("body.UnlockBatchRequestBody");
    set(ub, "consumerGroup", "cg1");
    set(ub, "clientId", "192.168.1.10@12345#1712345678901234");
    set(ub, "mqSet", new LinkedHashSet<>(Arrays.asList(mq("broker-a", 1))));
    body(list, "unlock-batch-request", "UnlockBatchRequestBody", toJson(ub), JSON.parse(toJson(ub)));

    Object ro = newp("body.ResetOffsetBody");
    Map<MessageQueue, Long> table = new HashMap<>();
    table.put(mq("broker-a", 0), 100L);
    table.put(mq("broker-a", 1), 200L);
    set(ro, "offsetTable", table);
    JSONArray rof = new JSONArray();
    for (Map.Entry<MessageQueue, Long> e : table.entrySet()) {
      JSONObject o = obj();
      o.put("brokerName", e.getKey().getBrokerName());
      o.put("queueId", e.getKey().getQueueId());
      o.put("topic", e.getKey().getTopic());
      o.put("offset", e.getValue());
      rof.add(o);
    }
    JSONObject rofw = obj();
    rofw.put("offsetTable", rof);
    body(list, "reset-offset-body", "ResetOffsetBody: a map whose keys are MessageQueue objects, written as JSON objects in key position (not valid JSON)", toJson(ro), rofw);

    consumerOffsetFiles(list);

    Object ks = newp("body.KVTable");
    HashMap<String, String> kv = new HashMap<>();
    kv.put("brokerVersion", "409");
    kv.put("msgPutTotalTodayNow", "12");
    set(ks, "table", kv);
    body(list, "kv-table", "KVTable (GET_BROKER_RUNTIME_INFO body): string map", toJson(ks), JSON.parse(toJson(ks)));

    Object cs = newp("admin.ConsumeStats");
    HashMap<MessageQueue, Object> ot = new HashMap<>();
    Object ow = newp("admin.OffsetWrapper");
    set(ow, "brokerOffset", 10L);
    set(ow, "consumerOffset", 7L);
    set(ow, "lastTimestamp", 1712345600000L);
    ot.put(mq("broker-a", 0), ow);
    set(cs, "offsetTable", ot);
    set(cs, "consumeTps", 1.5d);
    body(list, "consume-stats", "ConsumeStats: MessageQueue keys and a double", toJson(cs), null);
    return list;
  }

  /**
   * The broker's config/consumerOffset.json (ConsumerOffsetManager.encode(true)) and the
   * broadcasting client's offsets.json (OffsetSerializeWrapper.toJson(true)), both PrettyFormat.
   */
  @SuppressWarnings("unchecked")
  static void consumerOffsetFiles(JSONArray list) throws Exception {
    Object com = Class.forName("org.apache.rocketmq.broker.offset.ConsumerOffsetManager").getDeclaredConstructor().newInstance();
    Map<String, Map<Integer, Long>> table = (Map<String, Map<Integer, Long>>) com.getClass().getMethod("getOffsetTable").invoke(com);
    java.util.concurrent.ConcurrentHashMap<Integer, Long> q1 = new java.util.concurrent.ConcurrentHashMap<>();
    q1.put(0, 120L);
    q1.put(1, 98L);
    q1.put(17, 5000000000L);
    table.put("TopicTest@cg1", q1);
    java.util.concurrent.ConcurrentHashMap<Integer, Long> q2 = new java.util.concurrent.ConcurrentHashMap<>();
    q2.put(0, 0L);
    table.put("%RETRY%cg1@cg1", q2);
    Field dvf = field(com.getClass(), "dataVersion");
    if (dvf != null) {
      // fixed values so that the file is reproducible
      Object dv = dvf.get(com);
      set(dv, "timestamp", 1712345600000L);
      setOpt(dv, "stateVersion", 0L);
      ((java.util.concurrent.atomic.AtomicLong) field(dv.getClass(), "counter").get(dv)).set(3);
    }
    String text = (String) com.getClass().getMethod("encode", boolean.class).invoke(com, true);
    body(list, "consumer-offset-file", "the broker's consumerOffset.json (ConsumerOffsetManager.encode(true): PrettyFormat, tabs, unquoted queue ids)" + (v5() ? "; 5.x adds dataVersion, groupTopicMap, pullOffsetTable, resetOffsetTable" : ""), text, null);

    Class<?> wc = Class.forName("org.apache.rocketmq.client.consumer.store.OffsetSerializeWrapper");
    Object w = wc.getDeclaredConstructor().newInstance();
    Map<MessageQueue, java.util.concurrent.atomic.AtomicLong> ot = (Map<MessageQueue, java.util.concurrent.atomic.AtomicLong>) wc.getMethod("getOffsetTable").invoke(w);
    ot.put(mq("broker-a", 0), new java.util.concurrent.atomic.AtomicLong(42));
    Class<?> rs = Class.forName("org.apache.rocketmq.remoting.protocol.RemotingSerializable");
    String wt = (String) rs.getMethod("toJson", Object.class, boolean.class).invoke(null, w, true);
    body(list, "offset-serialize-wrapper", "a broadcasting consumer's offsets.json (OffsetSerializeWrapper.toJson(true)): MessageQueue object keys, PrettyFormat", wt, null);
  }

  // ---------------------------------------------------------------- HashMap order

  static JSONArray hashMapOrder() {
    JSONArray list = new JSONArray();
    List<String[]> cases = new ArrayList<>();
    cases.add(MANY_KEYS);
    cases.add(new String[] {"BB", "Aa", "AaAa", "BBBB", "AaBB", "BBAa", "topic", "queueId"});
    cases.add(new String[] {"topic", "consumerGroup", "queueId", "commitOffset", "bname"});
    List<String> hundred = new ArrayList<>();
    for (int i = 0; i < 100; i++) hundred.add("k" + i);
    cases.add(hundred.toArray(new String[0]));
    List<String> odd = new ArrayList<>();
    for (int i = 0; i < 30; i++) odd.add(i % 3 == 0 ? "\u4e2d" + i : i % 3 == 1 ? "\ud83d\ude00" + i : "Key_" + (i * 7919));
    cases.add(odd.toArray(new String[0]));
    // 13 keys: the first resize happens when the 13th is put
    cases.add(new String[] {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"});
    for (int initial : new int[] {16, 256}) {
      for (String[] keys : cases) {
        HashMap<String, String> m = new HashMap<>(initial);
        for (String k : keys) m.put(k, "");
        JSONObject v = obj();
        v.put("initialCapacity", initial);
        v.put("insertionOrder", Arrays.asList(keys));
        v.put("iterationOrder", new ArrayList<>(m.keySet()));
        list.add(v);
      }
    }
    return list;
  }

  // ---------------------------------------------------------------- ACL signatures

  static Object rpcHook(String ak, String sk, String token) throws Exception {
    Class<?> credsC = Class.forName("org.apache.rocketmq.acl.common.SessionCredentials");
    Object creds = token == null
        ? credsC.getConstructor(String.class, String.class).newInstance(ak, sk)
        : credsC.getConstructor(String.class, String.class, String.class).newInstance(ak, sk, token);
    Class<?> hookC = Class.forName("org.apache.rocketmq.acl.common.AclClientRPCHook");
    return hookC.getConstructor(credsC).newInstance(creds);
  }

  static void acl(JSONArray list, String name, String ak, String sk, String token, RemotingCommand req) throws Exception {
    req.makeCustomHeaderToNet();
    Map<String, String> before = req.getExtFields() == null ? new HashMap<>() : new HashMap<>(req.getExtFields());
    Object hook = rpcHook(ak, sk, token);
    hook.getClass().getMethod("doBeforeRequest", String.class, RemotingCommand.class).invoke(hook, "127.0.0.1:10911", req);
    JSONObject v = obj();
    v.put("name", name);
    v.put("accessKey", ak);
    v.put("secretKey", sk);
    if (token != null) v.put("securityToken", token);
    JSONObject ext = obj();
    new java.util.TreeMap<>(before).forEach(ext::put);
    v.put("extFields", ext);
    v.put("bodyHex", req.getBody() == null ? "" : hex(req.getBody()));
    v.put("signature", req.getExtFields().get("Signature"));
    JSONObject after = obj();
    new java.util.TreeMap<>(req.getExtFields()).forEach(after::put);
    v.put("signedExtFields", after);
    list.add(v);
  }

  static JSONArray aclSignatures() throws Exception {
    JSONArray list = new JSONArray();
    RemotingCommand r1 = request(14, null, 1);
    r1.addExtField("consumerGroup", "cg1");
    r1.addExtField("topic", "TopicTest");
    r1.addExtField("queueId", "0");
    acl(list, "query-offset-no-token", "RocketMQ", "12345678", null, r1);

    RemotingCommand r2 = request(14, null, 2);
    r2.addExtField("consumerGroup", "cg1");
    r2.addExtField("topic", "TopicTest");
    r2.addExtField("queueId", "0");
    acl(list, "query-offset-with-token", "RocketMQ", "12345678", "sts-token-abc", r2);

    RemotingCommand r3 = request(34, null, 3);
    r3.setBody("{\"clientID\":\"c1\"}".getBytes(StandardCharsets.UTF_8));
    acl(list, "heartbeat-body-only", "ak", "sk", null, r3);

    RemotingCommand r4 = request(310, null, 4);
    r4.addExtField("a", "pg1");
    r4.addExtField("b", "TopicTest");
    r4.addExtField("i", PROPS);
    r4.addExtField("z", "\u4e2d\u6587 \u00e9");
    r4.setBody("Hello RocketMQ".getBytes(StandardCharsets.UTF_8));
    acl(list, "send-v2-utf8-and-body", "AK\u00e9", "s\u00e9cret", "tok", r4);

    RemotingCommand r5 = request(105, null, 5);
    acl(list, "no-ext-fields", "RocketMQ", "12345678", null, r5);

    CommandCustomHeader h = (CommandCustomHeader) newp("header.PullMessageRequestHeader");
    set(h, "consumerGroup", "cg1");
    set(h, "topic", "TopicTest");
    set(h, "queueId", 3);
    set(h, "queueOffset", 123456789012L);
    set(h, "maxMsgNums", 32);
    set(h, "sysFlag", 7);
    set(h, "commitOffset", 0L);
    set(h, "suspendTimeoutMillis", 15000L);
    set(h, "subscription", "*");
    set(h, "subVersion", 1712345678000L);
    set(h, "expressionType", "TAG");
    acl(list, "pull-custom-header", "RocketMQ", "12345678", null, request(11, h, 6));

    RemotingCommand r7 = request(15, null, 7);
    r7.addExtField("AccessKey", "stale");
    r7.addExtField("Zeta", "1");
    r7.addExtField("alpha", "2");
    acl(list, "upper-and-lower-case-keys", "RocketMQ", "12345678", null, r7);
    return list;
  }
}
