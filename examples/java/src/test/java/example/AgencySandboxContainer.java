package example;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.utility.DockerImageName;

/**
 * The agency sandbox in a container (Testcontainers for Java), healthy once /_sandbox/health
 * answers. Either from an image your registry holds ({@code AGENCY_SANDBOX_IMAGE}, or
 * {@link #AgencySandboxContainer(DockerImageName)}), or built from a checkout of the sandbox's
 * repository: {@code AGENCY_SANDBOX_REPO}, else the nearest folder from the current directory
 * upwards holding the sandbox's Dockerfile (this example, run inside the repository, finds it).
 * The build honours the repository's .dockerignore.
 */
public final class AgencySandboxContainer extends GenericContainer<AgencySandboxContainer> {
    /** The image AGENCY_SANDBOX_IMAGE names, or else one built from the repository found as above. */
    public static AgencySandboxContainer fromEnvironment() {
        String image = System.getenv("AGENCY_SANDBOX_IMAGE");
        return image != null && !image.isBlank() ? new AgencySandboxContainer(DockerImageName.parse(image)) : new AgencySandboxContainer(repository());
    }

    public AgencySandboxContainer(DockerImageName image) {
        super(image);
        exposeAndWait();
    }

    public AgencySandboxContainer(Path repository) {
        super(new ImageFromDockerfile("agency-sandbox-test", false)
            .withFileFromPath(".", repository)
            .withDockerfile(repository.resolve("Dockerfile")));
        exposeAndWait();
    }

    private void exposeAndWait() {
        withExposedPorts(8080);
        withEnv("SANDBOX_DB", ":memory:");
        waitingFor(Wait.forHttp("/_sandbox/health").forPort(8080).withStartupTimeout(Duration.ofSeconds(60)));
    }

    /** AGENCY_SANDBOX_REPO, else the nearest folder from the current directory upwards with the sandbox's Dockerfile and package.json. */
    public static Path repository() {
        String configured = System.getenv("AGENCY_SANDBOX_REPO");
        if (configured != null && !configured.isBlank()) return Path.of(configured).toAbsolutePath();
        for (Path folder = Path.of("").toAbsolutePath(); folder != null; folder = folder.getParent()) {
            Path manifest = folder.resolve("package.json");
            try {
                if (Files.isRegularFile(folder.resolve("Dockerfile")) && Files.isRegularFile(manifest)
                    && Files.readString(manifest).contains("\"name\": \"agency-sandbox\"")) return folder;
            } catch (java.io.IOException e) {
                // unreadable: not the repository
            }
        }
        throw new IllegalStateException("no agency-sandbox checkout found from " + Path.of("").toAbsolutePath()
            + " upwards: set AGENCY_SANDBOX_REPO to a clone of the sandbox's repository, or AGENCY_SANDBOX_IMAGE to an image your registry holds");
    }

    /** Base URL of the vendor API and the control plane, e.g. http://localhost:32771 */
    public String baseUrl() {
        return "http://" + getHost() + ":" + getMappedPort(8080);
    }
}
