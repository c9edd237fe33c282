package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Base64;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The same checks against the sandbox in a container (JUnit 5 and Testcontainers; `mvn test`). Its
 * tests share the container's default world, so they run one at a time (junit-platform.properties
 * runs tests in parallel).
 */
@Testcontainers
@Execution(ExecutionMode.SAME_THREAD)
class PartnerSyncTest {
    @Container
    static final AgencySandboxContainer SANDBOX = AgencySandboxContainer.fromEnvironment();

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final String DEMO = "Basic " + Base64.getEncoder().encodeToString("abc:123".getBytes());

    private static HttpResponse<String> send(String method, String path, String json, boolean vendor) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(SANDBOX.baseUrl() + path))
            .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) request.header("Content-Type", "application/json");
        if (vendor) request.header("Authorization", DEMO);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    // One call restores everything the previous test changed: data, journal, faults, clock.
    @BeforeEach
    void cleanSlate() throws Exception {
        assertEquals(200, send("POST", "/_sandbox/reset", null, false).statusCode());
    }

    @Test
    void aFaultAnswersOnceThenTheReadSucceeds() throws Exception {
        send("POST", "/_sandbox/faults", "{\"match\":{\"path\":\"/vendor/agency/*/client/*\"},\"effect\":{\"status\":503},\"times\":1}", false);
        assertEquals(503, send("GET", "/vendor/agency/1001/client/1000?version=4.0", null, true).statusCode());
        assertEquals(200, send("GET", "/vendor/agency/1001/client/1000?version=4.0", null, true).statusCode());
    }

    @Test
    void theNextSyncReadsOnlyWhatChanged() throws Exception {
        send("PUT", "/_sandbox/clock", "{\"now\":\"2027-01-01T00:00:00Z\",\"frozen\":true}", false);
        send("POST", "/_sandbox/clock/advance", "{\"seconds\":60}", false);
        send("PATCH", "/_sandbox/agencies/1001/clients/1000", "{\"details\":{\"status\":\"DeadFile\"}}", false);
        HttpResponse<String> changed = send("GET", "/vendor/agency/1001/clients?version=4.0&asOf=2027-01-01T00:00:00Z", null, true);
        assertEquals("[1000]", changed.body());
    }
}
