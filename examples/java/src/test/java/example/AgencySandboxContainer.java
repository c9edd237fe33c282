package example;

import java.nio.file.Path;
import java.time.Duration;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The agency sandbox in a container (Testcontainers for Java): built from the repository's
 * Dockerfile (or use {@code new GenericContainer<>("your-registry/agency-sandbox:TAG")} for a
 * published image), healthy once /_sandbox/health answers.
 */
public final class AgencySandboxContainer extends GenericContainer<AgencySandboxContainer> {
    public AgencySandboxContainer(Path repository) {
        super(new ImageFromDockerfile("agency-sandbox-test", false).withFileFromPath(".", repository));
        withExposedPorts(8080);
        withEnv("SANDBOX_DB", ":memory:");
        waitingFor(Wait.forHttp("/_sandbox/health").forPort(8080).withStartupTimeout(Duration.ofSeconds(60)));
    }

    /** Base URL of the vendor API and the control plane, e.g. http://localhost:32771 */
    public String baseUrl() {
        return "http://" + getHost() + ":" + getMappedPort(8080);
    }
}
