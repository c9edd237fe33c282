package example;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The agency sandbox for a Java test suite, over HTTP only (the JDK's HttpClient, nothing else).
 * Use it through {@link AgencySandboxExtension} (JUnit 5), or on its own:
 *
 * <pre>{@code
 * try (AgencySandbox sandbox = AgencySandbox.start()) {
 *     sandbox.reset();
 *     HttpResponse<String> agencies = sandbox.vendor("GET", "/agencies?version=4.0", null);
 * }
 * }</pre>
 *
 * Where the sandbox comes from, first match wins:
 * <ul>
 *   <li>{@code AGENCY_SANDBOX_URL}: attach to a sandbox that already runs (a container, a CI service);</li>
 *   <li>{@code AGENCY_SANDBOX_CMD}: the command line that starts one, e.g. {@code node ../agency-sandbox/dist/bundle/cli.js};</li>
 *   <li>{@code agency-sandbox} installed in the project ({@code node_modules/.bin}, searched from the
 *       current directory upwards) or on PATH.</li>
 * </ul>
 * {@code AGENCY_SANDBOX_TOKEN} is the control token, when the sandbox has one.
 *
 * <p>Tests that run in parallel against one sandbox each take a world of their own
 * ({@link #createWorld(String, int)}): its own data, clock, faults, journal and sessions, reached by
 * its own credentials.
 *
 * <p>A started sandbox is stopped with every process it started (a launcher such as npx runs it as
 * a grandchild): the whole process tree gets SIGTERM, then SIGKILL after a grace period. The JDK
 * cannot give a child a process group of its own, so the tree is taken from
 * {@link ProcessHandle#descendants()} when stopping. A shutdown hook stops whatever still runs when
 * the JVM exits, also on Ctrl-C or SIGTERM; a sandbox whose JVM was killed (SIGKILL) stops itself,
 * as the pipe on its stdin closes ({@code serve --exit-on-stdin-close}). It listens on a free port
 * it picks itself (port 0) and names it in its ready file ({@code serve --ready-file}).
 */
public final class AgencySandbox implements AutoCloseable {
    public static final String DEMO_AUTH = "Basic " + Base64.getEncoder().encodeToString("abc:123".getBytes(StandardCharsets.UTF_8));
    private static final String BIN = "agency-sandbox";
    private static final boolean WINDOWS = System.getProperty("os.name", "").toLowerCase().startsWith("windows");
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    private static final Set<AgencySandbox> RUNNING = ConcurrentHashMap.newKeySet();
    private static final AtomicBoolean SHUTDOWN_HOOK = new AtomicBoolean();

    private volatile String url;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private volatile Process process;

    private AgencySandbox(String url, String token, Process process) {
        this.url = url.replaceAll("/+$", "");
        this.token = token;
        this.process = process;
    }

    /** Attaches to AGENCY_SANDBOX_URL, or starts a sandbox process and waits until it is healthy (30 s at most). */
    public static AgencySandbox start() throws IOException, InterruptedException {
        return start(Duration.ofSeconds(30));
    }

    public static AgencySandbox start(Duration timeout) throws IOException, InterruptedException {
        String token = System.getenv("AGENCY_SANDBOX_TOKEN");
        String attached = System.getenv("AGENCY_SANDBOX_URL");
        if (attached != null && !attached.isBlank()) {
            AgencySandbox sandbox = new AgencySandbox(attached.trim(), token, null);
            sandbox.waitHealthy(timeout);
            return sandbox;
        }
        List<String> command = new ArrayList<>(sandboxCommand());
        // port 0: the sandbox picks a free port and writes {"url":...,"pid":...} to the ready file once listening
        Path folder = Files.createTempDirectory("agency-sandbox-");
        Path readyFile = folder.resolve("ready.json");
        command.addAll(List.of("serve", "--port", "0", "--db", ":memory:", "--log-level", "warn",
            "--ready-file", readyFile.toString(), "--exit-on-stdin-close"));
        if (SHUTDOWN_HOOK.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(AgencySandbox::close), "agency-sandbox-stop"));
        }
        // stdin stays a pipe this JVM holds: when the JVM ends, even killed, the pipe closes and the sandbox stops itself
        Process started = new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        AgencySandbox sandbox = new AgencySandbox("", token, started);
        RUNNING.add(sandbox);
        try {
            sandbox.url = waitReady(started, readyFile, timeout);
        } catch (IOException | InterruptedException | RuntimeException e) {
            sandbox.close();
            throw e;
        } finally {
            Files.deleteIfExists(readyFile);
            Files.deleteIfExists(folder);
        }
        return sandbox;
    }

    private static final Pattern READY_URL = Pattern.compile("\"url\":\"([^\"]+)\"");

    /** The URL the started sandbox writes to its ready file once it listens. */
    private static String waitReady(Process started, Path readyFile, Duration timeout) throws IOException, InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (!Files.exists(readyFile)) {
            if (!started.isAlive()) throw new IllegalStateException("the sandbox exited with " + started.exitValue() + " before it was listening");
            if (Instant.now().isAfter(deadline)) throw new IOException("the sandbox did not say where it listens within " + timeout);
            Thread.sleep(50);
        }
        Matcher m = READY_URL.matcher(Files.readString(readyFile, StandardCharsets.UTF_8));
        if (!m.find()) throw new IllegalStateException("the ready file " + readyFile + " names no url");
        return m.group(1);
    }

    /** AGENCY_SANDBOX_CMD, else node_modules/.bin/agency-sandbox from the current directory upwards, else agency-sandbox on PATH. */
    public static List<String> sandboxCommand() {
        String configured = System.getenv("AGENCY_SANDBOX_CMD");
        if (configured != null && !configured.isBlank()) return splitCommand(configured);
        List<String> names = WINDOWS ? List.of(BIN + ".cmd", BIN) : List.of(BIN);
        Path cwd = Path.of("").toAbsolutePath();
        for (Path folder = cwd; folder != null; folder = folder.getParent()) {
            for (String name : names) {
                Path candidate = folder.resolve("node_modules").resolve(".bin").resolve(name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return List.of(candidate.toString());
            }
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            for (String name : names) {
                Path candidate = Path.of(dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return List.of(candidate.toString());
            }
        }
        throw new IllegalStateException(String.join(System.lineSeparator(),
            "no agency sandbox to use. Any one of these three ways works:",
            "  1. AGENCY_SANDBOX_URL=http://127.0.0.1:8080  attach to a sandbox that already runs (a container, a CI service)",
            "  2. AGENCY_SANDBOX_CMD='node /path/to/agency-sandbox/dist/bundle/cli.js'  the command that starts one",
            "  3. install the package in this project (npm install --save-dev ./agency-sandbox-<version>.tgz, or a git dependency):",
            "     its node_modules/.bin/" + BIN + " is found from " + cwd + " upwards, or `" + BIN + "` on PATH",
            "(the package is not on the npm registry yet, so `npx agency-sandbox` cannot fetch it)"));
    }

    /** Words of a command line: spaces separate them, single or double quotes keep spaces inside one. */
    public static List<String> splitCommand(String line) {
        List<String> words = new ArrayList<>();
        Matcher m = Pattern.compile("\"([^\"]*)\"|'([^']*)'|(\\S+)").matcher(line);
        while (m.find()) words.add(m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3));
        return words;
    }

    /** Base URL of the vendor API and the control plane, e.g. http://127.0.0.1:53124 */
    public String url() {
        return url;
    }

    /** The started process (null when attached to AGENCY_SANDBOX_URL or after close()). */
    public Process process() {
        return process;
    }

    public void waitHealthy(Duration timeout) throws IOException, InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            Process p = process;
            if (p != null && !p.isAlive()) throw new IllegalStateException("the sandbox exited with " + p.exitValue());
            try {
                if (send("GET", "/_sandbox/health", null, false).statusCode() == 200) return;
            } catch (IOException e) {
                // not listening yet
            }
            if (Instant.now().isAfter(deadline)) throw new IOException(url + "/_sandbox/health did not answer within " + timeout);
            Thread.sleep(100);
        }
    }

    /** Ends every process the sandbox started: SIGTERM to the whole tree, SIGKILL after a grace period. */
    @Override
    public void close() {
        Process p = process;
        process = null;
        RUNNING.remove(this);
        if (p == null) return;
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(p.toHandle());
        p.descendants().forEach(tree::add);
        tree.forEach(ProcessHandle::destroy);
        if (!gone(tree, STOP_GRACE)) {
            tree.forEach(ProcessHandle::destroyForcibly);
            gone(tree, Duration.ofSeconds(5));
        }
        try {
            p.getOutputStream().close();
        } catch (IOException e) {
            // the pipe to a sandbox that has ended: nothing to close
        }
    }

    private static boolean gone(List<ProcessHandle> tree, Duration within) {
        Instant deadline = Instant.now().plus(within);
        while (tree.stream().anyMatch(ProcessHandle::isAlive)) {
            if (Instant.now().isAfter(deadline)) return false;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private HttpResponse<String> send(String method, String path, String json, boolean vendor) throws IOException, InterruptedException {
        return send(method, path, json, vendor ? DEMO_AUTH : bearer(token));
    }

    /** One request to the sandbox with the given Authorization header (none when null); any status is returned. */
    HttpResponse<String> send(String method, String path, String json, String authorization) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url + path))
            .timeout(Duration.ofSeconds(30))
            .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) request.header("Content-Type", "application/json");
        if (authorization != null) request.header("Authorization", authorization);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String bearer(String token) {
        return token == null || token.isEmpty() ? null : "Bearer " + token;
    }

    /** The sandbox's control token (AGENCY_SANDBOX_TOKEN), or null. */
    String token() {
        return token;
    }

    /** A partner request (/vendor + path) with the demo credentials abc:123; any status is returned. */
    public HttpResponse<String> vendor(String method, String path, String json) throws IOException, InterruptedException {
        return send(method, "/vendor" + path, json, true);
    }

    /** One control call of the default world (/_sandbox + path); its JSON text. A 4xx or 5xx throws with the status and problem body. */
    public String control(String method, String path, String json) throws IOException, InterruptedException {
        return checked(send(method, "/_sandbox" + path, json, false), method, path);
    }

    static String checked(HttpResponse<String> response, String method, String path) {
        if (response.statusCode() >= 400) {
            throw new IllegalStateException(method + " " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    /**
     * A new world of this sandbox (POST /_sandbox/worlds) with the start-up fixture's data; the sandbox
     * deletes it after {@code ttlSeconds} without a request. {@link SandboxWorld#close()} deletes it at once.
     */
    public SandboxWorld createWorld(String name, int ttlSeconds) throws IOException, InterruptedException {
        String label = name == null ? "" : name.length() > 100 ? name.substring(0, 100) : name;
        String body = "{\"ttlSeconds\":" + ttlSeconds + (label.isEmpty() ? "" : ",\"name\":" + SandboxWorld.Json.quote(label)) + "}";
        return new SandboxWorld(this, control("POST", "/worlds", body));
    }

    /** Back to the start: data, pending writes, journal, faults, clock, simulator, rate windows. */
    public void reset() throws IOException, InterruptedException {
        control("POST", "/reset", null);
    }

    public String addFault(String ruleJson) throws IOException, InterruptedException {
        return control("POST", "/faults", ruleJson);
    }

    public String setClock(String isoInstant, boolean frozen) throws IOException, InterruptedException {
        return control("PUT", "/clock", "{\"now\":\"" + isoInstant + "\",\"frozen\":" + frozen + "}");
    }

    /** The journal of vendor requests, oldest first; e.g. "method=POST&path=/vendor/agency/1001/clients". */
    public String requests(String query) throws IOException, InterruptedException {
        return control("GET", "/requests" + (query == null || query.isEmpty() ? "" : "?" + query), null);
    }
}
