import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONObject;
import com.alibaba.fastjson.parser.Feature;
import com.alibaba.fastjson.serializer.SerializerFeature;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.filter.FilterFactory;
import org.apache.rocketmq.filter.expression.EvaluationContext;
import org.apache.rocketmq.filter.expression.Expression;

/**
 * Golden vectors for rocketwire's SQL92 filter (protocol/sql92): every expression of
 * sql92-cases.json is compiled with Apache RocketMQ's own FilterFactory.INSTANCE.get("SQL92")
 * (SqlFilter → SelectorParser) and, when it compiles, evaluated against every property set the
 * way the broker's ExpressionMessageFilter.isMatchedByCommitLog does (a throw is recorded as
 * "error"; the broker then does not deliver the message).
 *
 * Usage: java -cp ... Sql92Vectors <version> <cases.json> <output.json>
 */
public class Sql92Vectors {
  public static void main(String[] args) throws Exception {
    String version = args[0];
    JSONObject in = JSON.parseObject(new String(Files.readAllBytes(Paths.get(args[1])), StandardCharsets.UTF_8), Feature.OrderedField);
    JSONObject sets = in.getJSONObject("propertySets");
    List<Object> cases = new ArrayList<>();
    for (Object o : in.getJSONArray("expressions")) {
      String expr = (String) o;
      JSONObject c = new JSONObject(true);
      c.put("expression", expr);
      Expression compiled;
      try {
        compiled = FilterFactory.INSTANCE.get("SQL92").compile(expr);
      } catch (Throwable e) {
        c.put("compiles", false);
        Throwable root = e;
        while (root.getCause() != null) root = root.getCause();
        String m = String.valueOf(root.getMessage());
        int nl = m.indexOf('\n');
        c.put("javaError", root.getClass().getSimpleName() + ": " + (nl >= 0 ? m.substring(0, nl) : m));
        cases.add(c);
        continue;
      }
      c.put("compiles", true);
      JSONObject results = new JSONObject(true);
      for (String name : sets.keySet()) {
        JSONObject props = sets.getJSONObject(name);
        final Map<String, String> map = new HashMap<>();
        for (String k : props.keySet()) map.put(k, props.getString(k));
        EvaluationContext ctx = new EvaluationContext() {
          public Object get(String n) {
            return map.get(n);
          }

          public Map<String, Object> keyValues() {
            return new HashMap<String, Object>(map);
          }
        };
        Object r;
        try {
          Object v = compiled.evaluate(ctx);
          r = v instanceof Boolean ? v : v == null ? null : "non-boolean " + v;
        } catch (Throwable e) {
          r = "error";
        }
        results.put(name, r);
      }
      c.put("results", results);
      cases.add(c);
    }
    JSONObject out = new JSONObject(true);
    out.put("version", version);
    out.put("generator", "test/interop/vectors/Sql92Vectors.java from test/interop/vectors/sql92-cases.json");
    out.put("propertySets", sets);
    out.put("cases", cases);
    String text = JSON.toJSONString(out, SerializerFeature.PrettyFormat, SerializerFeature.WriteMapNullValue, SerializerFeature.DisableCircularReferenceDetect) + "\n";
    Files.write(Paths.get(args[2]), text.getBytes(StandardCharsets.UTF_8));
  }
}
