import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.mozilla.javascript.Context;
import org.mozilla.javascript.ContextFactory;
import org.mozilla.javascript.RhinoException;
import org.mozilla.javascript.Script;
import org.mozilla.javascript.ScriptableObject;
import org.mozilla.javascript.tools.shell.Global;

/**
 * One JVM for every AM-script run of a test process (Tests/CLITests/Support/AMScript.swift): a
 * JVM start costs about a CPU-second, a run in a warm one a few hundredths.
 *
 *   java -cp rhino.jar:CLASSES AMScriptServer HARNESS
 *
 * Reads one request per line, "SCRIPT\tCONTEXT" (two paths), and runs HARNESS (harness.js) as
 * `org.mozilla.javascript.tools.shell.Main HARNESS SCRIPT CONTEXT` does, each run in a new
 * shell global (standard objects, Java packages, print/load/readFile; nothing an earlier run
 * defined). Answers one line per request: "ok " and what the harness printed (one line of
 * JSON), or "error " and why the run failed, on one line. Compiled scripts are kept (and
 * compiled again when their file changes).
 */
public final class AMScriptServer {
  private static final java.util.Map<String, Object[]> compiled = new java.util.HashMap<>();

  private static Script compiledScript(Context cx, String path) throws java.io.IOException {
    File file = new File(path);
    long modified = file.lastModified();
    Object[] entry = compiled.get(path);
    if (entry == null || (Long) entry[0] != modified) {
      String source = new String(Files.readAllBytes(file.toPath()), StandardCharsets.UTF_8);
      entry = new Object[] {modified, cx.compileString(source, path, 1, null)};
      compiled.put(path, entry);
    }
    return (Script) entry[1];
  }

  public static void main(String[] args) throws Exception {
    String harness = args[0];
    BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream answers = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
    Context cx = ContextFactory.getGlobal().enterContext();
    for (String line; (line = input.readLine()) != null; ) {
      String[] paths = line.split("\t", 2);
      ByteArrayOutputStream printed = new ByteArrayOutputStream();
      String answer;
      try {
        if (paths.length != 2) throw new IllegalArgumentException("a request is SCRIPT<tab>CONTEXT");
        Global global = new Global(cx);
        global.setOut(new PrintStream(printed, true, "UTF-8"));
        global.defineProperty("arguments", cx.newArray(global, new Object[] {paths[0], paths[1]}), ScriptableObject.DONTENUM);
        compiledScript(cx, harness).exec(cx, global);
        answer = "ok " + new String(printed.toByteArray(), StandardCharsets.UTF_8).trim();
      } catch (RhinoException e) {
        answer = "error " + e.details() + " " + e.getScriptStackTrace();
      } catch (Throwable e) {
        answer = "error " + e;
      }
      answers.println(answer.replace('\n', ' ').replace('\r', ' '));
    }
  }
}
