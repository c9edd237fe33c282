package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * What a partner's Java test suite checks with the sandbox, over HTTP only (JUnit 5; no container).
 * These tests use the default world, reset before each: the lock runs them one at a time, beside
 * tests that each have a world of their own (ParallelWorldsHttpTest).
 */
@ExtendWith(AgencySandboxExtension.class)
@ResourceLock(AgencySandboxExtension.DEFAULT_WORLD)
class PartnerSyncHttpTest {
    private static final Pattern POST_ENTRY = Pattern.compile("\"method\":\"POST\"");

    private static List<String> ids(String jsonArray) {
        String inner = jsonArray.trim().replaceAll("^\\[|\\]$", "");
        return inner.isEmpty() ? List.of() : Arrays.asList(inner.split(","));
    }

    @Test
    void aFirstSyncReadsEveryClientInBatchesOf200(AgencySandbox sandbox) throws Exception {
        HttpResponse<String> listing = sandbox.vendor("GET", "/agency/1001/clients?version=4.0", null);
        assertEquals(200, listing.statusCode());
        List<String> ids = ids(listing.body());
        assertTrue(ids.size() > 200, "agency 1001 has more clients than one batch");
        for (int i = 0; i < ids.size(); i += 200) {
            String batch = String.join(",", ids.subList(i, Math.min(ids.size(), i + 200)));
            assertEquals(200, sandbox.vendor("POST", "/agency/1001/clients?version=4.0", "{\"clientNumbers\":[" + batch + "]}").statusCode());
        }
        String journal = sandbox.requests("method=POST&path=/vendor/agency/1001/clients");
        assertEquals((ids.size() + 199) / 200, POST_ENTRY.matcher(journal).results().count());
    }

    @Test
    void aFaultAnswersOnceThenTheReadSucceeds(AgencySandbox sandbox) throws Exception {
        sandbox.addFault("{\"match\":{\"path\":\"/vendor/agency/*/client/*\"},\"effect\":{\"status\":503},\"times\":1}");
        assertEquals(503, sandbox.vendor("GET", "/agency/1001/client/1000?version=4.0", null).statusCode());
        assertEquals(200, sandbox.vendor("GET", "/agency/1001/client/1000?version=4.0", null).statusCode());
    }

    @Test
    void theNextSyncReadsOnlyWhatChanged(AgencySandbox sandbox) throws Exception {
        sandbox.setClock("2027-01-01T00:00:00Z", true);
        sandbox.control("POST", "/clock/advance", "{\"seconds\":60}");
        sandbox.control("PATCH", "/agencies/1001/clients/1000", "{\"details\":{\"status\":\"DeadFile\"}}");
        HttpResponse<String> changed = sandbox.vendor("GET", "/agency/1001/clients?version=4.0&asOf=2027-01-01T00:00:00Z", null);
        assertEquals("[1000]", changed.body());
        assertEquals("Fri, 01 Jan 2027 00:01:00 GMT", changed.headers().firstValue("Date").orElse(""), "Date reads the sandbox clock");
    }

    @Test
    void aDisconnectedAgencySavesTheWriteForLater(AgencySandbox sandbox) throws Exception {
        sandbox.control("PATCH", "/agencies/1001", "{\"connected\":false}");
        String note = "{\"RefId\":\"" + UUID.randomUUID() + "\",\"TS\":\"2026-11-22T09:00:00Z\",\"Channel\":29,\"Note\":\"Called back\"}";
        assertEquals(202, sandbox.vendor("POST", "/agency/1001/client/1000/log?version=4.0", note).statusCode());
        sandbox.control("PATCH", "/agencies/1001", "{\"connected\":true}");
        String applied = sandbox.control("GET", "/agencies/1001/writes?kind=log&status=applied", null);
        assertTrue(applied.contains("Called back"), applied);
    }

    @Test
    void eachTestStartsFromACleanSlate(AgencySandbox sandbox) throws Exception {
        assertEquals("[]", sandbox.control("GET", "/faults", null).replaceAll("\\s", ""));
        assertEquals("[]", sandbox.requests("").replaceAll("\\s", ""));
        String clock = sandbox.control("GET", "/clock", null);
        assertTrue(clock.contains("\"frozen\":false"), clock);
    }
}
