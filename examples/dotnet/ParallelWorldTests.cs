// Tests that run in parallel against one sandbox, each in a world of its own (xUnit; `dotnet test`).
// xUnit runs test classes (each its own collection) in parallel and makes a new instance for every
// test, so each test gets a world in InitializeAsync; tests within one class run one after another,
// hence one class per concern. Each test writes, adds faults, moves the clock and resets as it likes;
// the assertions are exact, so another test's actions leaking into this world would fail them.
using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Xunit;

[assembly: CollectionBehavior(CollectionBehavior.CollectionPerClass, MaxParallelThreads = 4)]

namespace AgencySandbox.Examples;

public abstract class WorldTest : IAsyncLifetime
{
    /// <summary>Agency 1001's highest client number + 1: the number every fresh world gives next.</summary>
    protected const int NextClient = 1260;
    protected SandboxWorld World { get; private set; } = default!;

    public async Task InitializeAsync() => World = await (await SandboxFixture.SharedAsync()).CreateWorldAsync(GetType().Name);
    public async Task DisposeAsync() => await World.DisposeAsync();

    protected static object Note(string text) => new { refId = Guid.NewGuid(), ts = "2026-11-20T10:00:00Z", channel = 29, note = text };

    protected async Task<int> CreateClientAsync()
    {
        var created = await World.Vendor.PostAsJsonAsync("agency/1001/client?version=4.0", new
        {
            People = new[] { new { FirstName = "Ada", LastName = "Lovelace", MainContactType = "First" } },
            Log = new { Channel = 29, Note = "New client from the partner portal", TS = "2026-11-20T10:00:00Z" }
        });
        Assert.Equal(HttpStatusCode.OK, created.StatusCode);
        return (await created.Content.ReadFromJsonAsync<JsonElement>()).GetProperty("clientNumber").GetInt32();
    }
}

public sealed class WritesInAWorld : WorldTest
{
    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public async Task LogNotesAndANewClientAreThisWorldsWritesAlone(int notes)
    {
        for (var i = 0; i < notes; i++)
            Assert.Equal(HttpStatusCode.OK, (await World.Vendor.PostAsJsonAsync("agency/1001/client/1000/log?version=4.0", Note($"note {i}"))).StatusCode);
        Assert.Equal(NextClient, await CreateClientAsync());
        var writes = (await World.WritesAsync(1001)).EnumerateArray().ToList();
        Assert.Equal(Enumerable.Repeat("log", notes).Append("client"), writes.Select(w => w.GetProperty("kind").GetString()));
        Assert.All(writes, w => Assert.Equal($"abc@{World.Id}", w.GetProperty("integration").GetString()));
        Assert.Equal(notes + 1, (await World.RequestsAsync("method=POST")).GetArrayLength());
    }
}

public sealed class FaultsInAWorld : WorldTest
{
    [Fact]
    public async Task AFaultAnswersThisWorldsRequestsOnly()
    {
        await World.AddFaultAsync(new { match = new { path = "/vendor/agencies" }, effect = new { status = 503, body = new { world = World.Id } } });
        var faulted = await World.Vendor.GetAsync("agencies?version=4.0");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, faulted.StatusCode);
        Assert.Equal(World.Id, (await faulted.Content.ReadFromJsonAsync<JsonElement>()).GetProperty("world").GetString());
        await using var other = await (await SandboxFixture.SharedAsync()).CreateWorldAsync("a second world", 60);
        Assert.Equal(HttpStatusCode.OK, (await other.Vendor.GetAsync("agencies?version=4.0")).StatusCode);
    }
}

public sealed class ClockInAWorld : WorldTest
{
    [Fact]
    public async Task TheClockIsThisWorldsOwn()
    {
        var lastSync = new DateTimeOffset(2031, 1, 1, 0, 0, 0, TimeSpan.Zero);
        await World.SetClockAsync(lastSync);
        await World.AdvanceClockAsync(60);
        await World.PatchClientAsync(1001, 1000, new { details = new { status = "DeadFile" } });
        var changed = await World.Vendor.GetAsync($"agency/1001/clients?version=4.0&asOf={Uri.EscapeDataString(lastSync.ToString("O"))}");
        Assert.Equal(new[] { 1000 }, await changed.Content.ReadFromJsonAsync<int[]>());
        Assert.Equal(lastSync.AddSeconds(60), changed.Headers.Date);
    }
}

public sealed class ResetInAWorld : WorldTest
{
    [Fact]
    public async Task AResetWithinATestReturnsThisWorldToItsStart()
    {
        await World.SetClockAsync(new DateTimeOffset(2030, 6, 1, 0, 0, 0, TimeSpan.Zero));
        await World.AddFaultAsync(new { match = new { path = "/vendor/agency/*/client/*" }, effect = new { status = 500 } });
        Assert.Equal(NextClient, await CreateClientAsync());
        await World.ResetAsync();
        Assert.Equal(0, (await World.WritesAsync(1001)).GetArrayLength());
        Assert.Equal(0, (await World.FaultsAsync()).GetArrayLength());
        Assert.False((await World.ClockAsync()).GetProperty("frozen").GetBoolean());
        Assert.Equal(NextClient, await CreateClientAsync());
    }
}
