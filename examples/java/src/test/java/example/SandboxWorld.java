package example;

import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One world of a sandbox: its own data, clock, faults, journal and sessions, reached by its own
 * credentials (every Client Id ends with {@code @<world id>}). The vendor API's base URL is the
 * sandbox's; the Basic-auth Client Id picks the world, so {@link #vendor} reads and writes this world
 * only, and {@link #control} reaches this world's control routes ({@code /_sandbox/worlds/<id>/...}).
 *
 * <pre>{@code
 * try (SandboxWorld world = sandbox.createWorld("my test", 600)) {
 *     String header = world.authorization();          // give this to the integration under test
 *     world.setClock("2027-01-01T00:00:00Z", true);
 *     HttpResponse<String> agencies = world.vendor("GET", "/agencies?version=4.0", null);
 * }                                                    // deleted: its credentials answer 401
 * }</pre>
 */
public final class SandboxWorld implements AutoCloseable {
    /** An integration of the world: the Basic-auth user name and password. */
    public record Integration(String clientId, String clientSecret) { }

    private final AgencySandbox sandbox;
    private final String id;
    private final String name;
    private final String token;
    private final List<Integration> integrations = new ArrayList<>();

    SandboxWorld(AgencySandbox sandbox, String created) {
        this.sandbox = sandbox;
        Map<?, ?> answer = (Map<?, ?>) Json.parse(created);
        this.id = (String) answer.get("id");
        this.name = (String) answer.get("name");
        this.token = (String) answer.get("token");
        for (Object i : (List<?>) answer.get("integrations")) {
            Map<?, ?> integration = (Map<?, ?>) i;
            integrations.add(new Integration((String) integration.get("clientId"), (String) integration.get("clientSecret")));
        }
    }

    public String id() {
        return id;
    }

    public String name() {
        return name;
    }

    /** The base URL of the vendor API and the control plane: the sandbox's (the credentials choose the world). */
    public String url() {
        return sandbox.url();
    }

    public List<Integration> integrations() {
        return List.copyOf(integrations);
    }

    /** The world's copy of {@code clientId} ({@code abc} finds {@code abc@<world id>}). */
    public Integration integration(String clientId) {
        for (Integration i : integrations) {
            if (i.clientId().equals(clientId) || i.clientId().equals(clientId + "@" + id)) return i;
        }
        throw new IllegalArgumentException("world " + id + " has no integration " + clientId + "; it has " + integrations);
    }

    /** The Authorization header of the world's copy of the demo integration abc. */
    public String authorization() {
        return authorization("abc");
    }

    /** The Authorization header your integration sends to reach this world as {@code clientId}. */
    public String authorization(String clientId) {
        Integration i = integration(clientId);
        return "Basic " + Base64.getEncoder().encodeToString((i.clientId() + ":" + i.clientSecret()).getBytes(StandardCharsets.UTF_8));
    }

    /** A partner request to this world (/vendor + path) as abc; any status is returned. */
    public HttpResponse<String> vendor(String method, String path, String json) throws IOException, InterruptedException {
        return sandbox.send(method, "/vendor" + path, json, authorization());
    }

    /** One control call of this world; its JSON text. A 4xx or 5xx throws with the status and problem body. */
    public String control(String method, String path, String json) throws IOException, InterruptedException {
        String prefix = "/_sandbox/worlds/" + URLEncoder.encode(id, StandardCharsets.UTF_8);
        // the sandbox's token opens every world; the world's own token opens this one
        String bearer = AgencySandbox.bearer(sandbox.token() != null && !sandbox.token().isEmpty() ? sandbox.token() : token);
        return AgencySandbox.checked(sandbox.send(method, prefix + path, json, bearer), method, prefix + path);
    }

    /** The same, parsed: a Map, a List, a String, a Long, a Double, a Boolean or null. */
    public Object controlJson(String method, String path, String json) throws IOException, InterruptedException {
        return Json.parse(control(method, path, json));
    }

    /** Back to the world's start: data, pending writes, journal, faults, clock, simulator, rate windows, sessions. */
    public void reset() throws IOException, InterruptedException {
        control("POST", "/reset", null);
    }

    public String addFault(String ruleJson) throws IOException, InterruptedException {
        return control("POST", "/faults", ruleJson);
    }

    public String setClock(String isoInstant, boolean frozen) throws IOException, InterruptedException {
        return control("PUT", "/clock", "{\"now\":" + Json.quote(isoInstant) + ",\"frozen\":" + frozen + "}");
    }

    /** The world's journal of vendor requests, oldest first; e.g. "method=POST". */
    public List<?> requests(String query) throws IOException, InterruptedException {
        return (List<?>) controlJson("GET", "/requests" + (query == null || query.isEmpty() ? "" : "?" + query), null);
    }

    /** The writes partners made to an agency of this world, in arrival order. */
    public List<?> writes(int agencyId) throws IOException, InterruptedException {
        return (List<?>) controlJson("GET", "/agencies/" + agencyId + "/writes", null);
    }

    /** Deletes the world: its credentials answer 401 from then on. A world already gone is fine. */
    @Override
    public void close() {
        try {
            HttpResponse<String> response = sandbox.send("DELETE", "/_sandbox/worlds/" + URLEncoder.encode(id, StandardCharsets.UTF_8), null, AgencySandbox.bearer(sandbox.token()));
            if (response.statusCode() >= 400 && response.statusCode() != 404) {
                throw new IllegalStateException("DELETE world " + id + " answered " + response.statusCode() + ": " + response.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not delete world " + id + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "world " + id + " (" + name + ")";
    }

    /** Just enough JSON for the answers a test reads (examples have no JSON library): objects keep their key order. */
    public static final class Json {
        private final String text;
        private int at;

        private Json(String text) {
            this.text = text;
        }

        public static Object parse(String text) {
            Json json = new Json(text);
            Object value = json.value();
            json.space();
            if (json.at != text.length()) throw json.error("end of the document");
            return value;
        }

        /** A JSON string of {@code s}. */
        public static String quote(String s) {
            StringBuilder out = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') out.append('\\').append(c);
                else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                else out.append(c);
            }
            return out.append('"').toString();
        }

        private Object value() {
            space();
            if (at >= text.length()) throw error("a value");
            char c = text.charAt(at);
            if (c == '{') return object();
            if (c == '[') return array();
            if (c == '"') return string();
            for (String word : new String[] {"true", "false", "null"}) {
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
            String number = text.substring(start, at);
            if (number.isEmpty()) throw error("a value");
            return number.matches("-?\\d+") ? (Object) Long.valueOf(number) : (Object) Double.valueOf(number);
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            if (peek() == '}') {
                at++;
                return map;
            }
            while (true) {
                space();
                String key = string();
                expect(':');
                map.put(key, value());
                if (next(',', '}') == '}') return map;
            }
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            at++;
            if (peek() == ']') {
                at++;
                return list;
            }
            while (true) {
                list.add(value());
                if (next(',', ']') == ']') return list;
            }
        }

        private String string() {
            if (at >= text.length() || text.charAt(at) != '"') throw error("a string");
            StringBuilder out = new StringBuilder();
            for (at++; ; at++) {
                if (at >= text.length()) throw error("the end of a string");
                char c = text.charAt(at);
                if (c == '"') {
                    at++;
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = text.charAt(++at);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at + 1, at + 5), 16));
                        at += 4;
                    }
                    default -> out.append(e);
                }
            }
        }

        private char peek() {
            space();
            return at < text.length() ? text.charAt(at) : '\0';
        }

        private void expect(char c) {
            if (peek() != c) throw error("'" + c + "'");
            at++;
        }

        private char next(char more, char end) {
            char c = peek();
            if (c != more && c != end) throw error("'" + more + "' or '" + end + "'");
            at++;
            return c;
        }

        private void space() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
        }

        private IllegalArgumentException error(String expected) {
            return new IllegalArgumentException("JSON: expected " + expected + " at " + at + " of " + (text.length() > 200 ? text.substring(0, 200) + "…" : text));
        }
    }
}
