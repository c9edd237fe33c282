// One world of a sandbox for a C# test: its own data, clock, faults, journal and sessions, reached by
// its own credentials (every Client Id ends with @<world id>). The vendor API's base URL is the
// sandbox's; the Basic-auth Client Id picks the world. Made by SandboxFixture.CreateWorldAsync.
using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;

namespace AgencySandbox.Examples;

public sealed class SandboxWorld : IAsyncDisposable
{
    // one connection pool for every world's control calls (each call carries its own headers)
    private static readonly HttpClient Http = new();

    private readonly Uri _baseUrl;
    private readonly string? _sandboxToken;
    private readonly string _token;

    public string Id { get; }
    public string Name { get; }
    /// <summary>The world's integrations: Basic-auth user name and password.</summary>
    public IReadOnlyList<(string ClientId, string ClientSecret)> Integrations { get; }
    /// <summary>HTTP client for your integration under test: base address /vendor/, Basic auth as the world's abc.</summary>
    public HttpClient Vendor { get; }

    internal SandboxWorld(Uri baseUrl, string? sandboxToken, JsonElement created)
    {
        _baseUrl = baseUrl;
        _sandboxToken = sandboxToken;
        Id = created.GetProperty("id").GetString()!;
        Name = created.GetProperty("name").GetString()!;
        _token = created.GetProperty("token").GetString()!;
        Integrations = created.GetProperty("integrations").EnumerateArray()
            .Select(i => (i.GetProperty("clientId").GetString()!, i.GetProperty("clientSecret").GetString()!))
            .ToList();
        Vendor = new HttpClient { BaseAddress = new Uri(baseUrl, "vendor/") };
        Vendor.DefaultRequestHeaders.Authorization = Authorization();
    }

    /// <summary>The Authorization header your integration sends to reach this world as <paramref name="clientId"/> (abc finds abc@&lt;world id&gt;).</summary>
    public AuthenticationHeaderValue Authorization(string clientId = "abc")
    {
        var (id, secret) = Integrations.FirstOrDefault(i => i.ClientId == clientId || i.ClientId == $"{clientId}@{Id}");
        if (id is null) throw new ArgumentException($"world {Id} has no integration {clientId}; it has {string.Join(", ", Integrations.Select(i => i.ClientId))}");
        return new AuthenticationHeaderValue("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes($"{id}:{secret}")));
    }

    /// <summary>One control call of this world (/_sandbox/worlds/{id}/ + path); a 4xx or 5xx throws with the status and problem body.</summary>
    public async Task<JsonElement> SendAsync(HttpMethod method, string path, object? body = null)
    {
        using var request = new HttpRequestMessage(method, new Uri(_baseUrl, $"_sandbox/worlds/{Uri.EscapeDataString(Id)}/{path.TrimStart('/')}"));
        // the sandbox's token opens every world; the world's own token opens this one
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", _sandboxToken ?? _token);
        if (body is not null) request.Content = JsonContent.Create(body);
        using var response = await Http.SendAsync(request);
        var text = await response.Content.ReadAsStringAsync();
        if (!response.IsSuccessStatusCode) throw new HttpRequestException($"{method} {path} in world {Id} answered {(int)response.StatusCode}: {text}");
        return text.Length == 0 ? default : JsonDocument.Parse(text).RootElement.Clone();
    }

    /// <summary>Back to the world's start: data, pending writes, journal, faults, clock, simulator, rate windows, sessions.</summary>
    public Task<JsonElement> ResetAsync() => SendAsync(HttpMethod.Post, "reset");
    public Task<JsonElement> AddFaultAsync(object rule) => SendAsync(HttpMethod.Post, "faults", rule);
    public Task<JsonElement> FaultsAsync() => SendAsync(HttpMethod.Get, "faults");
    public Task<JsonElement> SetClockAsync(DateTimeOffset now, bool frozen = true) => SendAsync(HttpMethod.Put, "clock", new { now = now.ToString("O"), frozen });
    public Task<JsonElement> AdvanceClockAsync(int seconds) => SendAsync(HttpMethod.Post, "clock/advance", new { seconds });
    public Task<JsonElement> ClockAsync() => SendAsync(HttpMethod.Get, "clock");
    /// <summary>The world's journal of vendor requests, oldest first; e.g. "method=POST".</summary>
    public Task<JsonElement> RequestsAsync(string query = "") => SendAsync(HttpMethod.Get, "requests" + (query.Length == 0 ? "" : "?" + query));
    public Task<JsonElement> WritesAsync(int agencyId) => SendAsync(HttpMethod.Get, $"agencies/{agencyId}/writes");
    public Task<JsonElement> PatchClientAsync(int agencyId, int clientNumber, object patch) => SendAsync(HttpMethod.Patch, $"agencies/{agencyId}/clients/{clientNumber}", patch);

    /// <summary>Deletes the world: its credentials answer 401 from then on. A world already gone is fine.</summary>
    public async ValueTask DisposeAsync()
    {
        Vendor.Dispose();
        using var request = new HttpRequestMessage(HttpMethod.Delete, new Uri(_baseUrl, $"_sandbox/worlds/{Uri.EscapeDataString(Id)}"));
        if (_sandboxToken is not null) request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", _sandboxToken);
        using var response = await Http.SendAsync(request);
        if (!response.IsSuccessStatusCode && response.StatusCode != HttpStatusCode.NotFound)
            throw new HttpRequestException($"DELETE world {Id} answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
    }
}
