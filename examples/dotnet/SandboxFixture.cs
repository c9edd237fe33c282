// An xUnit fixture for the agency sandbox that needs only HTTP: it attaches to AGENCY_SANDBOX_URL
// (a container, a CI service) or starts `npx agency-sandbox serve` on a free port, and exposes the
// control calls a test suite uses. Share it with [Collection] and reset in each test's constructor.
using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Text.Json;
using Xunit;

namespace AgencySandbox.Examples;

public sealed class SandboxFixture : IAsyncLifetime
{
    private Process? _process;
    public Uri BaseUrl { get; private set; } = default!;
    /// <summary>HTTP client for your integration under test: Basic auth with the demo credentials abc:123.</summary>
    public HttpClient Vendor { get; private set; } = default!;
    private HttpClient _control = default!;

    public async Task InitializeAsync()
    {
        var attached = Environment.GetEnvironmentVariable("AGENCY_SANDBOX_URL");
        if (string.IsNullOrEmpty(attached))
        {
            var port = FreePort();
            var command = Environment.GetEnvironmentVariable("AGENCY_SANDBOX_CMD") ?? "npx agency-sandbox";
            var parts = command.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            var start = new ProcessStartInfo(parts[0]) { RedirectStandardOutput = true, RedirectStandardError = true };
            foreach (var arg in parts.Skip(1).Concat(new[] { "serve", "--port", port.ToString(), "--db", ":memory:", "--log-level", "warn" }))
                start.ArgumentList.Add(arg);
            _process = Process.Start(start) ?? throw new InvalidOperationException($"could not start {command}");
            attached = $"http://127.0.0.1:{port}";
        }
        BaseUrl = new Uri(attached.TrimEnd('/') + "/");
        _control = new HttpClient { BaseAddress = new Uri(BaseUrl, "_sandbox/") };
        var token = Environment.GetEnvironmentVariable("AGENCY_SANDBOX_TOKEN");
        if (!string.IsNullOrEmpty(token)) _control.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        Vendor = new HttpClient { BaseAddress = new Uri(BaseUrl, "vendor/") };
        Vendor.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String("abc:123"u8.ToArray()));
        await WaitHealthyAsync(TimeSpan.FromSeconds(30));
    }

    public Task DisposeAsync()
    {
        if (_process is { HasExited: false }) _process.Kill(entireProcessTree: true);
        return Task.CompletedTask;
    }

    private static int FreePort()
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }

    private async Task WaitHealthyAsync(TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            try
            {
                if ((await _control.GetAsync("health")).IsSuccessStatusCode) return;
            }
            catch (HttpRequestException) { }
            if (_process is { HasExited: true }) throw new InvalidOperationException($"the sandbox exited with {_process.ExitCode}");
            if (DateTime.UtcNow > deadline) throw new TimeoutException($"{BaseUrl}_sandbox/health did not answer within {timeout}");
            await Task.Delay(100);
        }
    }

    private async Task<JsonElement> SendAsync(HttpMethod method, string path, object? body = null)
    {
        using var request = new HttpRequestMessage(method, path.TrimStart('/'));
        if (body is not null) request.Content = JsonContent.Create(body);
        using var response = await _control.SendAsync(request);
        var text = await response.Content.ReadAsStringAsync();
        if (!response.IsSuccessStatusCode) throw new HttpRequestException($"{method} {path} answered {(int)response.StatusCode}: {text}");
        return text.Length == 0 ? default : JsonDocument.Parse(text).RootElement.Clone();
    }

    /// <summary>Back to the start: data, pending writes, journal, faults, clock, simulator, rate windows.</summary>
    public Task<JsonElement> ResetAsync() => SendAsync(HttpMethod.Post, "reset");
    public Task<JsonElement> AddFaultAsync(object rule) => SendAsync(HttpMethod.Post, "faults", rule);
    public Task<JsonElement> SetClockAsync(DateTimeOffset now, bool frozen = true) => SendAsync(HttpMethod.Put, "clock", new { now = now.ToString("O"), frozen });
    public Task<JsonElement> AdvanceClockAsync(int seconds) => SendAsync(HttpMethod.Post, "clock/advance", new { seconds });
    /// <summary>The journal of vendor requests, oldest first; e.g. "method=POST&amp;path=/vendor/agency/*/clients".</summary>
    public Task<JsonElement> RequestsAsync(string query = "") => SendAsync(HttpMethod.Get, "requests" + (query.Length == 0 ? "" : "?" + query));
    public Task<JsonElement> PatchClientAsync(int agencyId, int clientNumber, object patch) => SendAsync(HttpMethod.Patch, $"agencies/{agencyId}/clients/{clientNumber}", patch);
}

[CollectionDefinition("sandbox")]
public sealed class SandboxCollection : ICollectionFixture<SandboxFixture> { }
