"""The sandbox in a container for a Python test suite (testcontainers-python): built from the
repository's Dockerfile, healthy once /_sandbox/health answers. conftest.py attaches to it through
AGENCY_SANDBOX_URL instead of starting a process:

    # conftest.py
    from testcontainers_setup import sandbox_container

    @pytest.fixture(scope="session", autouse=True)
    def container():
        with sandbox_container() as url:
            os.environ["AGENCY_SANDBOX_URL"] = url
            yield url
"""
import contextlib
import os

from testcontainers.core.container import DockerContainer
from testcontainers.core.image import DockerImage

from agency_sandbox import Sandbox


@contextlib.contextmanager
def sandbox_container(repository: str = os.path.join(os.path.dirname(__file__), "..", "..")):
    with DockerImage(path=repository, tag="agency-sandbox:test") as image:
        with DockerContainer(str(image)).with_exposed_ports(8080).with_env("SANDBOX_DB", ":memory:") as container:
            url = f"http://{container.get_container_host_ip()}:{container.get_exposed_port(8080)}"
            Sandbox(url).wait_healthy(60)  # waits on /_sandbox/health
            yield url
