import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.RPCHook;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * Runs several mqadmin commands (MQAdminStartup, the tools jar's entry point) in one JVM, so a test
 * pays one JVM start-up for all of them: `batch --namesrv NS "clusterList" "topicStatus -t T" ...`.
 * Each command's words are separated by single spaces; "-n NS" is added. For each command one JSON
 * line: {"type":"mqadmin","command":…,"ms":…,"output":<what it printed on stdout>,"stderr":<the end of its stderr>}. MQAdminStartup
 * prints a failed command's exception (stderr) and returns, as the mqadmin script exits 0 then too.
 */
public class MqadminBatchClient {
    public static void main(String[] argv) throws Exception {
        if (argv.length < 3 || !argv[0].equals("batch") || !argv[1].equals("--namesrv")) {
            RefClient.fail("usage: batch --namesrv NS 'command args...' ...");
        }
        String namesrv = argv[2];
        // spawnRefClient appends "--ak AK --sk SK" after the commands: every command signs with them
        int end = argv.length;
        RPCHook hook = null;
        if (end >= 7 && argv[end - 4].equals("--ak") && argv[end - 2].equals("--sk")) {
            hook = new AclClientRPCHook(new SessionCredentials(argv[end - 3], argv[end - 1]));
            end -= 4;
        }
        PrintStream real = System.out;
        PrintStream realErr = System.err;
        for (int i = 3; i < end; i++) {
            String cmd = argv[i];
            String[] words = cmd.split(" ");
            String[] args = new String[words.length + 2];
            System.arraycopy(words, 0, args, 0, words.length);
            args[words.length] = "-n";
            args[words.length + 1] = namesrv;
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream capture = new PrintStream(buf, true, "UTF-8");
            ByteArrayOutputStream errBuf = new ByteArrayOutputStream();
            PrintStream errCapture = new PrintStream(errBuf, true, "UTF-8");
            long t0 = System.nanoTime();
            System.setOut(capture);
            System.setErr(errCapture);
            try {
                MQAdminStartup.main0(args, hook);
            } catch (Throwable e) {
                capture.println("EXCEPTION " + e);
            } finally {
                capture.flush();
                errCapture.flush();
                System.setOut(real);
                System.setErr(realErr);
            }
            RefClient.print(new RefClient.Json().put("type", "mqadmin").put("command", cmd)
                .put("ms", (System.nanoTime() - t0) / 1_000_000).put("output", new String(buf.toByteArray(), StandardCharsets.UTF_8))
                .put("stderr", tail(new String(errBuf.toByteArray(), StandardCharsets.UTF_8))));
        }
        System.exit(0);
    }

    /** The end of a command's stderr (a failed command's stack trace; logging before it is noise). */
    private static String tail(String s) {
        return s.length() <= 4000 ? s : s.substring(s.length() - 4000);
    }
}
