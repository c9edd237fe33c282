package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tests that run in parallel against one sandbox, each in a world of its own (a SandboxWorld
 * parameter; junit-platform.properties turns parallel execution on). Each test writes, adds faults,
 * moves the clock and resets as it likes; nothing it does reaches another test's world. The
 * assertions are exact (counts, numbers, times), so another test's actions leaking into this world
 * would fail them.
 */
@ExtendWith(AgencySandboxExtension.class)
class ParallelWorldsHttpTest {
    /** Agency 1001's highest client number + 1: the number every fresh world gives next. */
    private static final long NEXT_CLIENT = 1260;
    private static final String NEW_CLIENT = "{\"People\":[{\"FirstName\":\"Ada\",\"LastName\":\"Lovelace\",\"MainContactType\":\"First\"}],"
        + "\"Log\":{\"Channel\":29,\"Note\":\"New client from the partner portal\",\"TS\":\"2026-11-20T10:00:00Z\"}}";

    private static String note(String text) {
        return "{\"refId\":\"" + UUID.randomUUID() + "\",\"ts\":\"2026-11-20T10:00:00Z\",\"channel\":29,\"note\":\"" + text + "\"}";
    }

    private static long createClient(SandboxWorld world) throws Exception {
        HttpResponse<String> created = world.vendor("POST", "/agency/1001/client?version=4.0", NEW_CLIENT);
        assertEquals(200, created.statusCode(), created.body());
        return (Long) ((Map<?, ?>) SandboxWorld.Json.parse(created.body())).get("clientNumber");
    }

    /** Which thread ran the test: the run shows the tests ran side by side. */
    private static void ranOn(SandboxWorld world) {
        System.out.println("ran in " + world + " on " + Thread.currentThread().getName());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void writesAreThisWorldsAlone(int notes, SandboxWorld world) throws Exception {
        ranOn(world);
        for (int i = 0; i < notes; i++) {
            assertEquals(200, world.vendor("POST", "/agency/1001/client/1000/log?version=4.0", note("note " + i)).statusCode());
        }
        assertEquals(NEXT_CLIENT, createClient(world), "no other test created a client in this world");
        List<?> writes = world.writes(1001);
        List<String> kinds = writes.stream().map(w -> String.valueOf(((Map<?, ?>) w).get("kind"))).toList();
        List<String> expected = new ArrayList<>(Collections.nCopies(notes, "log"));
        expected.add("client");
        assertEquals(expected, kinds);
        assertTrue(writes.stream().allMatch(w -> ("abc@" + world.id()).equals(((Map<?, ?>) w).get("integration"))), "written by this world's abc");
        assertEquals(notes + 1, world.requests("method=POST").size(), "the journal holds this test's requests only");
    }

    @Test
    void aFaultAnswersThisWorldsRequestsOnly(SandboxWorld world, AgencySandbox sandbox) throws Exception {
        ranOn(world);
        world.addFault("{\"match\":{\"path\":\"/vendor/agencies\"},\"effect\":{\"status\":503,\"body\":{\"world\":\"" + world.id() + "\"}}}");
        HttpResponse<String> faulted = world.vendor("GET", "/agencies?version=4.0", null);
        assertEquals(503, faulted.statusCode());
        assertEquals(Map.of("world", world.id()), SandboxWorld.Json.parse(faulted.body()));
        try (SandboxWorld other = sandbox.createWorld("a second world of the same test", 60)) {
            assertEquals(200, other.vendor("GET", "/agencies?version=4.0", null).statusCode(), "another world has no fault");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2027, 2031})
    void theClockIsThisWorldsOwn(int year, SandboxWorld world) throws Exception {
        ranOn(world);
        world.setClock(year + "-01-01T00:00:00Z", true);
        world.control("POST", "/clock/advance", "{\"seconds\":60}");
        world.control("PATCH", "/agencies/1001/clients/1000", "{\"details\":{\"status\":\"DeadFile\"}}");
        HttpResponse<String> changed = world.vendor("GET", "/agency/1001/clients?version=4.0&asOf=" + year + "-01-01T00:00:00Z", null);
        assertEquals("[1000]", changed.body());
        ZonedDateTime date = ZonedDateTime.parse(changed.headers().firstValue("Date").orElse(""), DateTimeFormatter.RFC_1123_DATE_TIME);
        assertEquals(year + "-01-01T00:01Z", date.toOffsetDateTime().toString(), "Date reads this world's clock");
    }

    @Test
    void aResetWithinATestReturnsThisWorldToItsStart(SandboxWorld world) throws Exception {
        ranOn(world);
        world.setClock("2030-06-01T00:00:00Z", true);
        world.addFault("{\"match\":{\"path\":\"/vendor/agency/*/client/*\"},\"effect\":{\"status\":500}}");
        assertEquals(NEXT_CLIENT, createClient(world));
        world.reset();
        assertEquals(List.of(), world.writes(1001));
        assertEquals(List.of(), world.controlJson("GET", "/faults", null));
        assertEquals(List.of(), world.requests(""));
        assertEquals(Boolean.FALSE, ((Map<?, ?>) world.controlJson("GET", "/clock", null)).get("frozen"));
        assertEquals(NEXT_CLIENT, createClient(world), "the number is free again after the reset");
    }
}
