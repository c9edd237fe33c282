"""pytest fixtures for the agency sandbox: one sandbox per test run, and for each test either a world
of its own or the default world reset.

Copy this file and agency_sandbox.py into your test folder. Set AGENCY_SANDBOX_URL to use a sandbox
that already runs (a container or CI service); otherwise one is started with AGENCY_SANDBOX_CMD, or
with the agency-sandbox installed in your project (node_modules/.bin) or on PATH. It is stopped,
with every process it started, when the run ends or is interrupted.

Two fixtures for tests, use either (or both in one suite):

    def test_in_a_world(world):       # a world of its own (POST /_sandbox/worlds), deleted after the test:
        world.vendor(...)              # its data, clock, faults, journal and sessions are this test's alone,
                                       # so tests run in parallel: pytest -n 4 (pytest-xdist)
    def test_in_the_default_world(sandbox):   # the default world (Client Id abc), reset before the test

With pytest-xdist the controlling process starts the one sandbox before its workers and hands its
URL to them, so `pytest -n 4` runs against ONE sandbox, stopped once at the end. Tests that take
`sandbox` share the default world: under xdist they take turns (a lock the workers share), while
tests that take `world` run side by side.
"""
import contextlib
import os
import shutil
import tempfile

import pytest

from agency_sandbox import Sandbox

WORLD_TTL_SECONDS = 600  # an interrupted run's worlds are deleted by the sandbox after 10 idle minutes

_URL, _TOKEN, _LOCK = "agency_sandbox_url", "agency_sandbox_token", "agency_sandbox_lock"

# In the controlling process of an xdist run: the sandbox every worker uses, and the folder of the lock.
_run: dict = {}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, in the controlling process, before each worker starts: one sandbox for all of them."""
    if "sandbox" not in _run:
        _run["sandbox"] = Sandbox.start()
        _run["folder"] = tempfile.mkdtemp(prefix="agency-sandbox-run-")
    node.workerinput[_URL] = _run["sandbox"].url
    node.workerinput[_TOKEN] = _run["sandbox"].token
    node.workerinput[_LOCK] = os.path.join(_run["folder"], "default-world.lock")


def pytest_unconfigure(config):
    """The end of the run (also after Ctrl-C): the controlling process stops the sandbox it started."""
    sandbox = _run.pop("sandbox", None)
    if sandbox is not None:
        sandbox.stop()
    folder = _run.pop("folder", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _from_controller(config) -> dict:
    """What the controlling process handed to this xdist worker (empty without xdist)."""
    return getattr(config, "workerinput", {})


@pytest.fixture(scope="session")
def sandbox_session(request):
    given = _from_controller(request.config)
    sandbox = Sandbox.attach(given[_URL], given[_TOKEN]) if _URL in given else Sandbox.start()
    yield sandbox
    sandbox.stop()  # leaves a sandbox this process did not start running


@pytest.fixture
def world(sandbox_session, request):
    """A world of its own for the test: its credentials (world.authorization()), vendor and control calls."""
    created = sandbox_session.create_world(name=request.node.nodeid, ttl_seconds=WORLD_TTL_SECONDS)
    yield created
    created.delete()


@pytest.fixture
def sandbox(sandbox_session, request):
    """The default world, reset before the test: one call restores data, journal, faults, clock, simulator."""
    with _exclusive(_from_controller(request.config).get(_LOCK)):
        sandbox_session.reset()
        yield sandbox_session


@contextlib.contextmanager
def _exclusive(path):
    """Holds a lock file shared by the xdist workers for the block (nothing to hold without xdist)."""
    if path is None:
        yield
        return
    with open(path, "a+b") as f:
        try:
            import fcntl
        except ImportError:  # Windows
            import msvcrt
            f.seek(0)
            while True:
                try:
                    msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)  # gives up after 10 s: try again
                    break
                except OSError:
                    pass
            try:
                yield
            finally:
                f.seek(0)
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
            return
        fcntl.flock(f, fcntl.LOCK_EX)
        yield  # released when the file closes
