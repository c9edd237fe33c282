// The sandbox in a container for a C# test suite (Testcontainers for .NET): build the image from the
// repository's Dockerfile (or use a published one), wait on /_sandbox/health, then point
// AGENCY_SANDBOX_URL at it so SandboxFixture attaches instead of starting a process.
using DotNet.Testcontainers.Builders;
using DotNet.Testcontainers.Containers;
using DotNet.Testcontainers.Images;

namespace AgencySandbox.Examples;

public static class TestcontainersSandbox
{
    public static async Task<IContainer> StartAsync(string dockerfileDirectory)
    {
        IFutureDockerImage image = new ImageFromDockerfileBuilder()
            .WithDockerfileDirectory(dockerfileDirectory)
            .WithName("agency-sandbox:test")
            .Build();
        await image.CreateAsync();
        var container = new ContainerBuilder()
            .WithImage(image)
            .WithPortBinding(8080, assignRandomHostPort: true)
            .WithEnvironment("SANDBOX_DB", ":memory:")
            .WithWaitStrategy(Wait.ForUnixContainer().UntilHttpRequestIsSucceeded(r => r.ForPort(8080).ForPath("/_sandbox/health")))
            .Build();
        await container.StartAsync();
        Environment.SetEnvironmentVariable("AGENCY_SANDBOX_URL", $"http://{container.Hostname}:{container.GetMappedPublicPort(8080)}");
        return container;
    }
}
