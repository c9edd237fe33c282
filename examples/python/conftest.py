"""pytest fixtures for the agency sandbox: one sandbox per test session, a clean slate before each test.

Copy this file and agency_sandbox.py into your test folder. Set AGENCY_SANDBOX_URL to use a sandbox
that already runs (a container or CI service); otherwise one is started with AGENCY_SANDBOX_CMD, or
with the agency-sandbox installed in your project (node_modules/.bin) or on PATH. It is stopped,
with every process it started, when the session ends or the run is interrupted.
"""
import pytest

from agency_sandbox import Sandbox


@pytest.fixture(scope="session")
def sandbox_session():
    sandbox = Sandbox.start()
    yield sandbox
    sandbox.stop()


@pytest.fixture
def sandbox(sandbox_session):
    # One call restores everything a test may have changed: data, journal, faults, clock, simulator.
    sandbox_session.reset()
    return sandbox_session
