// An xUnit fixture for the agency sandbox that needs only HTTP, and exposes the control calls a test
// suite uses. Two ways to use it:
//   - the default world: share it with [Collection("sandbox")] and reset in each test's
//     InitializeAsync (PartnerSyncTests.cs); those tests run one at a time;
//   - a world per test: `await SandboxFixture.SharedAsync()` gives the run's one sandbox, and
//     `CreateWorldAsync()` a world of its own (SandboxWorld.cs), so test classes run in parallel
//     against it (ParallelWorldTests.cs).
//
// Where the sandbox comes from, first match wins:
//   AGENCY_SANDBOX_URL   attach to a sandbox that already runs (a container, a CI service)
//   AGENCY_SANDBOX_CMD   the command line that starts one, e.g. "node ../agency-sandbox/dist/bundle/cli.js"
//   agency-sandbox       installed in the project (node_modules/.bin, searched from the current
//                        directory upwards) or on PATH
// and AGENCY_SANDBOX_TOKEN is the control token, when the sandbox has one.
//
// A started sandbox is stopped with every process it started, also when the test run ends early
// (ProcessExit, Ctrl-C): on Linux it runs in a session of its own (through setsid) and the whole
// group gets SIGTERM, then SIGKILL after a grace period; elsewhere the process tree is killed. A
// sandbox whose test process was killed stops itself, as the pipe on its stdin closes (serve
// --exit-on-stdin-close). It listens on a free port it picks itself (port 0) and names it in its
// ready file (serve --ready-file).
using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Runtime.InteropServices;
using System.Text.Json;
using Xunit;

namespace AgencySandbox.Examples;

public sealed class SandboxFixture : IAsyncLifetime
{
    private const string Bin = "agency-sandbox";
    private static readonly TimeSpan StopGrace = TimeSpan.FromSeconds(10);
    private static readonly HashSet<SandboxFixture> Running = new();
    private static bool _exitHooks;

    private Process? _process;
    private bool _ownSession;
    private string? _token;
    public Uri BaseUrl { get; private set; } = default!;
    /// <summary>HTTP client for your integration under test: Basic auth with the demo credentials abc:123.</summary>
    public HttpClient Vendor { get; private set; } = default!;
    private HttpClient _control = default!;

    public async Task InitializeAsync()
    {
        var attached = Environment.GetEnvironmentVariable("AGENCY_SANDBOX_URL");
        if (string.IsNullOrEmpty(attached))
        {
            // port 0: the sandbox picks a free port and writes {"url":...,"pid":...} to the ready file once listening
            var folder = Path.Combine(Path.GetTempPath(), "agency-sandbox-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(folder);
            try
            {
                var readyFile = Path.Combine(folder, "ready.json");
                StartProcess(SandboxCommand(), readyFile);
                attached = await WaitReadyAsync(readyFile, TimeSpan.FromSeconds(30));
            }
            catch
            {
                await StopAsync();
                throw;
            }
            finally
            {
                Directory.Delete(folder, recursive: true);
            }
        }
        BaseUrl = new Uri(attached.TrimEnd('/') + "/");
        _control = new HttpClient { BaseAddress = new Uri(BaseUrl, "_sandbox/") };
        var token = Environment.GetEnvironmentVariable("AGENCY_SANDBOX_TOKEN");
        _token = string.IsNullOrEmpty(token) ? null : token;
        if (_token is not null) _control.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", _token);
        Vendor = new HttpClient { BaseAddress = new Uri(BaseUrl, "vendor/") };
        Vendor.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String("abc:123"u8.ToArray()));
        try
        {
            await WaitHealthyAsync(TimeSpan.FromSeconds(30));
        }
        catch
        {
            await StopAsync();
            throw;
        }
    }

    public Task DisposeAsync() => StopAsync();

    /// <summary>
    /// The run's one sandbox for tests that each take a world: started (or attached) on first use and
    /// stopped when the test process exits (ProcessExit, like every sandbox this fixture starts). xUnit 2
    /// has no assembly fixture; with xUnit v3, [assembly: AssemblyFixture(typeof(SandboxFixture))] does the same.
    /// </summary>
    public static Task<SandboxFixture> SharedAsync() => Shared.Value;

    private static readonly Lazy<Task<SandboxFixture>> Shared = new(async () =>
    {
        var sandbox = new SandboxFixture();
        await sandbox.InitializeAsync();
        return sandbox;
    }, LazyThreadSafetyMode.ExecutionAndPublication);

    /// <summary>
    /// A new world of this sandbox (POST /_sandbox/worlds) with the start-up fixture's data: its own
    /// data, clock, faults, journal and sessions, reached by its own credentials. Deleted on
    /// DisposeAsync, or by the sandbox after <paramref name="ttlSeconds"/> without a request.
    /// </summary>
    public async Task<SandboxWorld> CreateWorldAsync(string? name = null, int ttlSeconds = 600)
    {
        var body = new Dictionary<string, object> { ["ttlSeconds"] = ttlSeconds };
        if (!string.IsNullOrEmpty(name)) body["name"] = name.Length > 100 ? name[..100] : name;
        var created = await SendAsync(HttpMethod.Post, "worlds", body);
        return new SandboxWorld(BaseUrl, _token, created);
    }

    /// <summary>AGENCY_SANDBOX_CMD, else node_modules/.bin/agency-sandbox from the current directory upwards, else agency-sandbox on PATH.</summary>
    public static List<string> SandboxCommand()
    {
        var configured = Environment.GetEnvironmentVariable("AGENCY_SANDBOX_CMD");
        if (!string.IsNullOrWhiteSpace(configured)) return SplitCommand(configured);
        var names = OperatingSystem.IsWindows() ? new[] { Bin + ".cmd", Bin } : new[] { Bin };
        for (var folder = new DirectoryInfo(Directory.GetCurrentDirectory()); folder is not null; folder = folder.Parent)
            foreach (var name in names)
            {
                var candidate = Path.Combine(folder.FullName, "node_modules", ".bin", name);
                if (File.Exists(candidate)) return new List<string> { candidate };
            }
        foreach (var dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
            foreach (var name in names)
                if (File.Exists(Path.Combine(dir, name))) return new List<string> { Path.Combine(dir, name) };
        throw new InvalidOperationException(string.Join(Environment.NewLine,
            "no agency sandbox to use. Any one of these three ways works:",
            "  1. AGENCY_SANDBOX_URL=http://127.0.0.1:8080  attach to a sandbox that already runs (a container, a CI service)",
            "  2. AGENCY_SANDBOX_CMD='node /path/to/agency-sandbox/dist/bundle/cli.js'  the command that starts one",
            "  3. install the package in this project (npm install --save-dev ./agency-sandbox-<version>.tgz, or a git dependency):",
            $"     its node_modules/.bin/{Bin} is found from {Directory.GetCurrentDirectory()} upwards, or `{Bin}` on PATH",
            "(the package is not on the npm registry yet, so `npx agency-sandbox` cannot fetch it)"));
    }

    /// <summary>Words of a command line: spaces separate them, single or double quotes keep spaces inside one.</summary>
    public static List<string> SplitCommand(string line) =>
        System.Text.RegularExpressions.Regex.Matches(line, "\"([^\"]*)\"|'([^']*)'|(\\S+)")
            .Select(m => m.Groups[1].Success ? m.Groups[1].Value : m.Groups[2].Success ? m.Groups[2].Value : m.Groups[3].Value)
            .ToList();

    private void StartProcess(List<string> command, string readyFile)
    {
        var arguments = command.Concat(new[] { "serve", "--port", "0", "--db", ":memory:", "--log-level", "warn", "--ready-file", readyFile, "--exit-on-stdin-close" }).ToList();
        // .NET cannot start a process in a new session itself; setsid (util-linux) does, and execs the command.
        var setsid = OperatingSystem.IsLinux() ? new[] { "/usr/bin/setsid", "/bin/setsid" }.FirstOrDefault(File.Exists) : null;
        _ownSession = setsid is not null;
        // stdin: a pipe only this process holds; when it ends, even killed, the sandbox stops itself
        var start = new ProcessStartInfo(setsid ?? arguments[0]) { UseShellExecute = false, RedirectStandardInput = true, RedirectStandardOutput = false, RedirectStandardError = false };
        foreach (var arg in setsid is null ? arguments.Skip(1) : arguments) start.ArgumentList.Add(arg);
        lock (Running)
        {
            if (!_exitHooks)
            {
                _exitHooks = true;
                AppDomain.CurrentDomain.ProcessExit += (_, _) => StopAll();
                Console.CancelKeyPress += (_, _) => StopAll();
            }
            _process = Process.Start(start) ?? throw new InvalidOperationException($"could not start {string.Join(' ', command)}");
            Running.Add(this);
        }
    }

    private static void StopAll()
    {
        SandboxFixture[] all;
        lock (Running) all = Running.ToArray();
        foreach (var sandbox in all) sandbox.StopAsync().GetAwaiter().GetResult();
    }

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int sig);
    private const int SIGTERM = 15, SIGKILL = 9;

    /// <summary>Ends every process the sandbox started: SIGTERM to its session's group, SIGKILL after a grace period; elsewhere the whole tree.</summary>
    public async Task StopAsync()
    {
        Process? process;
        lock (Running)
        {
            process = _process;
            _process = null;
            Running.Remove(this);
        }
        if (process is null) return;
        if (!_ownSession)
        {
            if (!process.HasExited) process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            return;
        }
        // the group's id is the started process's pid (setsid made it the session leader)
        foreach (var (signal, wait) in new[] { (SIGTERM, StopGrace), (SIGKILL, TimeSpan.FromSeconds(5)) })
        {
            kill(-process.Id, signal);
            var deadline = DateTime.UtcNow + wait;
            while (GroupAlive(process) && DateTime.UtcNow < deadline) await Task.Delay(50);
            if (!GroupAlive(process)) break;
        }
    }

    /// <summary>Whether a process of the group still runs; an unreaped zombie (an orphan under an init that does not reap) counts as gone.</summary>
    private static bool GroupAlive(Process leader)
    {
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out _)) continue;
            string stat;
            try { stat = File.ReadAllText(Path.Combine(dir, "stat")); } catch (IOException) { continue; } catch (UnauthorizedAccessException) { continue; }
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            if (fields.Length > 2 && fields[2] == leader.Id.ToString() && fields[0] != "Z" && fields[0] != "X") return true;
        }
        return false;
    }

    /// <summary>The URL the started sandbox writes to its ready file once it listens.</summary>
    private async Task<string> WaitReadyAsync(string readyFile, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!File.Exists(readyFile))
        {
            if (_process is { HasExited: true }) throw new InvalidOperationException($"the sandbox exited with {_process.ExitCode} before it was listening");
            if (DateTime.UtcNow > deadline) throw new TimeoutException($"the sandbox did not say where it listens within {timeout}");
            await Task.Delay(50);
        }
        using var ready = JsonDocument.Parse(await File.ReadAllTextAsync(readyFile));
        return ready.RootElement.GetProperty("url").GetString()!;
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
