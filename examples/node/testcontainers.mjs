// The sandbox in a container for a Node test suite (the `testcontainers` package): built from the
// repository's Dockerfile, healthy once /_sandbox/health answers. Point AGENCY_SANDBOX_URL at it
// and sandbox-process.mjs attaches instead of starting a process.
import { GenericContainer, Wait } from 'testcontainers'

export async function startSandboxContainer (repository = new URL('../..', import.meta.url).pathname) {
  const image = await GenericContainer.fromDockerfile(repository).build('agency-sandbox:test', { deleteOnExit: false })
  const container = await image
    .withExposedPorts(8080)
    .withEnvironment({ SANDBOX_DB: ':memory:' })
    .withWaitStrategy(Wait.forHttp('/_sandbox/health', 8080))
    .start()
  process.env.AGENCY_SANDBOX_URL = `http://${container.getHost()}:${container.getMappedPort(8080)}`
  return container
}
