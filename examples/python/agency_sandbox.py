"""A sandbox for Python test suites: start one (or attach to a running one) and drive its control API.

Standard library only. Use it from pytest (see conftest.py) or unittest (see test_unittest_sync.py):

    sandbox = Sandbox.start()          # a fresh sandbox process on a free port, in-memory database
    sandbox.reset()                    # a clean slate: data, journal, faults, clock, simulator, rate windows
    sandbox.add_fault({"match": {"path": "/vendor/agency/*/clients"}, "effect": {"status": 503}, "times": 1})
    sandbox.requests(method="POST")    # what your integration sent
    sandbox.stop()

Environment:
    AGENCY_SANDBOX_URL   attach to a sandbox that already runs (a container, a CI service) instead of starting one
    AGENCY_SANDBOX_CMD   the command that starts one (default: "npx agency-sandbox")
    AGENCY_SANDBOX_TOKEN the control token, when the sandbox was started with SANDBOX_CONTROL_TOKEN
"""
from __future__ import annotations

import base64
import json
import os
import shlex
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

DEMO_CLIENT_ID = "abc"
DEMO_CLIENT_SECRET = "123"


class ControlError(Exception):
    """A control call answered an error: the status and the problem body."""

    def __init__(self, status: int, body: Any, method: str, path: str) -> None:
        super().__init__(f"{method} {path} answered {status}: {body}")
        self.status = status
        self.body = body


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sandbox:
    def __init__(self, url: str, process: Optional[subprocess.Popen] = None, token: Optional[str] = None) -> None:
        self.url = url.rstrip("/")
        self.process = process
        self.token = token

    # -- life cycle ---------------------------------------------------------------------------
    @classmethod
    def start(cls, timeout: float = 30.0) -> "Sandbox":
        """Attach to AGENCY_SANDBOX_URL, or start a sandbox process and wait until it is healthy."""
        token = os.environ.get("AGENCY_SANDBOX_TOKEN")
        attached = os.environ.get("AGENCY_SANDBOX_URL")
        if attached:
            sandbox = cls(attached, token=token)
            sandbox.wait_healthy(timeout)
            return sandbox
        port = _free_port()
        command = shlex.split(os.environ.get("AGENCY_SANDBOX_CMD", "npx agency-sandbox"))
        process = subprocess.Popen(
            [*command, "serve", "--port", str(port), "--db", ":memory:", "--log-level", "warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        sandbox = cls(f"http://127.0.0.1:{port}", process, token)
        try:
            sandbox.wait_healthy(timeout)
        except Exception:
            sandbox.stop()
            raise
        return sandbox

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"the sandbox exited with {self.process.returncode}: {err}")
            try:
                if self.control("GET", "/health")["status"] == "ok":
                    return
            except (OSError, ControlError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.url}/_sandbox/health did not answer within {timeout} s")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    # -- HTTP ----------------------------------------------------------------------------------
    def _send(self, method: str, url: str, headers: dict, body: Optional[bytes]) -> tuple[int, dict, Any]:
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as res:
                status, message, raw = res.status, res.headers, res.read()
        except urllib.error.HTTPError as e:
            status, message, raw = e.code, e.headers, e.read()
        text = raw.decode("utf-8")
        # header names as lower-case keys (HTTP header names are case-insensitive)
        res_headers = {name.lower(): value for name, value in message.items()}
        kind = res_headers.get("content-type", "")
        return status, res_headers, json.loads(text) if text and "json" in kind else text

    def control(self, verb: str, route: str, body: Any = None, query: Optional[dict] = None) -> Any:
        """One control call (/_sandbox + route); raises ControlError on a 4xx/5xx."""
        headers = {"accept": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body).encode()
        q = {k: v for k, v in (query or {}).items() if v is not None}
        url = f"{self.url}/_sandbox{route}" + (f"?{urllib.parse.urlencode(q)}" if q else "")
        status, _, parsed = self._send(verb, url, headers, data)
        if status >= 400:
            raise ControlError(status, parsed, verb, route)
        return parsed

    def vendor(self, method: str, path: str, body: Any = None, client_id: str = DEMO_CLIENT_ID,
               client_secret: str = DEMO_CLIENT_SECRET, **query: Any) -> tuple[int, dict, Any]:
        """A partner request (/vendor + path) with Basic auth; returns (status, headers with lower-case names, body)."""
        credentials = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        headers = {"authorization": f"Basic {credentials}", "accept": "application/json"}
        data = None
        if body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body).encode()
        q = {k: v for k, v in query.items() if v is not None}
        url = f"{self.url}/vendor{path}" + (f"?{urllib.parse.urlencode(q)}" if q else "")
        return self._send(method, url, headers, data)

    # -- the control API a test suite uses most ------------------------------------------------
    def reset(self, keep: Optional[list[str]] = None) -> Any:
        """Back to the start: data, pending writes, journal, faults, clock, simulator, rate windows."""
        return self.control("POST", "/reset", {"keep": keep} if keep else None)

    def add_fault(self, rule: dict) -> dict:
        return self.control("POST", "/faults", rule)

    def set_clock(self, now: str, frozen: bool = True) -> dict:
        return self.control("PUT", "/clock", {"now": now, "frozen": frozen})

    def real_clock(self) -> dict:
        return self.control("DELETE", "/clock")

    def requests(self, **filters: Any) -> list[dict]:
        """The journal of vendor requests, oldest first (method, path, agencyId, status, since, limit)."""
        return self.control("GET", "/requests", query=filters)

    def patch_agency(self, agency_id: int, **flags: Any) -> dict:
        return self.control("PATCH", f"/agencies/{agency_id}", flags)

    def writes(self, agency_id: int, **filters: Any) -> list[dict]:
        return self.control("GET", f"/agencies/{agency_id}/writes", query=filters)
