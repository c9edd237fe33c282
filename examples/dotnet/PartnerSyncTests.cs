// What a partner's C# test suite checks with the sandbox (xUnit; `dotnet test`).
using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Xunit;

namespace AgencySandbox.Examples;

[Collection("sandbox")]
public sealed class PartnerSyncTests : IAsyncLifetime
{
    private readonly SandboxFixture _sandbox;
    public PartnerSyncTests(SandboxFixture sandbox) => _sandbox = sandbox;

    // One call restores everything the previous test changed.
    public async Task InitializeAsync() => await _sandbox.ResetAsync();
    public Task DisposeAsync() => Task.CompletedTask;

    [Fact]
    public async Task FirstSyncReadsEveryClientInBatchesOf200()
    {
        var ids = await _sandbox.Vendor.GetFromJsonAsync<int[]>("agency/1001/clients?Version=4.0");
        Assert.NotNull(ids);
        foreach (var batch in ids!.Chunk(200))
        {
            var response = await _sandbox.Vendor.PostAsJsonAsync("agency/1001/clients?version=4.0", new { ClientNumbers = batch });
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
        var batches = await _sandbox.RequestsAsync("method=POST&path=/vendor/agency/1001/clients");
        Assert.Equal((ids.Length + 199) / 200, batches.GetArrayLength());
    }

    [Fact]
    public async Task A503IsAnsweredOnceThenTheReadSucceeds()
    {
        await _sandbox.AddFaultAsync(new { match = new { method = "GET", path = "/vendor/agency/*/client/*" }, effect = new { status = 503 }, times = 1 });
        Assert.Equal(HttpStatusCode.ServiceUnavailable, (await _sandbox.Vendor.GetAsync("agency/1001/client/1000?version=4.0")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await _sandbox.Vendor.GetAsync("agency/1001/client/1000?version=4.0")).StatusCode);
    }

    [Fact]
    public async Task TheNextSyncReadsOnlyWhatChanged()
    {
        var lastSync = new DateTimeOffset(2027, 1, 1, 0, 0, 0, TimeSpan.Zero);
        await _sandbox.SetClockAsync(lastSync);
        await _sandbox.AdvanceClockAsync(60);
        await _sandbox.PatchClientAsync(1001, 1000, new { details = new { status = "DeadFile" } });
        var changed = await _sandbox.Vendor.GetFromJsonAsync<int[]>($"agency/1001/clients?version=4.0&asOf={Uri.EscapeDataString(lastSync.ToString("O"))}");
        Assert.Equal(new[] { 1000 }, changed);
    }
}
