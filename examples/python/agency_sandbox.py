"""A sandbox for Python test suites: start one (or attach to a running one) and drive its control API.

Standard library only. Use it from pytest (see conftest.py) or without it (see run_without_pytest.py):

    sandbox = Sandbox.start()          # attach, or a fresh sandbox process on a free port, in-memory database
    sandbox.reset()                    # a clean slate: data, journal, faults, clock, simulator, rate windows
    sandbox.add_fault({"match": {"path": "/vendor/agency/*/clients"}, "effect": {"status": 503}, "times": 1})
    sandbox.requests(method="POST")    # what your integration sent
    sandbox.stop()

Tests that run in parallel against one sandbox each take a world of their own: its own data, clock,
faults, journal and sessions, reached by its own credentials (every Client Id ends with @<world id>):

    world = sandbox.create_world(ttl_seconds=600)
    world.authorization()              # "Basic ..." of the world's copy of the demo integration abc
    world.vendor("GET", "/agencies", version="4.0")   # the same calls as a Sandbox, in this world only
    world.reset(); world.add_fault({...}); world.set_clock("2027-01-01T00:00:00Z")
    world.delete()

Where the sandbox comes from, first match wins:
    AGENCY_SANDBOX_URL   attach to a sandbox that already runs (a container, a CI service)
    AGENCY_SANDBOX_CMD   the command line that starts one, e.g. "node ../agency-sandbox/dist/bundle/cli.js"
    agency-sandbox       installed in the project (node_modules/.bin, searched from the current
                         directory upwards) or on PATH
and AGENCY_SANDBOX_TOKEN is the control token, when the sandbox was started with SANDBOX_CONTROL_TOKEN.

A started sandbox runs in its own session (process group); stop() ends the whole group, SIGTERM
then SIGKILL after a grace period, so a launcher in between (npx, a shell) leaves nothing behind.
Sandboxes still running when the interpreter exits (a test run ended or interrupted with Ctrl-C,
SIGTERM or SIGHUP) are stopped the same way; one whose interpreter was killed (SIGKILL) stops
itself, as the pipe on its stdin closes (serve --exit-on-stdin-close). It listens on a free port
it picks itself (port 0) and names it in its ready file (serve --ready-file).
"""
from __future__ import annotations

import atexit
import base64
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

DEMO_CLIENT_ID = "abc"
DEMO_CLIENT_SECRET = "123"
BIN = "agency-sandbox"
STOP_GRACE_SECONDS = 10.0


class ControlError(Exception):
    """A control call answered an error: the status and the problem body."""

    def __init__(self, status: int, body: Any, method: str, path: str) -> None:
        super().__init__(f"{method} {path} answered {status}: {body}")
        self.status = status
        self.body = body


class SandboxNotFound(RuntimeError):
    """No sandbox to attach to and no command to start one."""


def _installed_bin(start: str) -> Optional[str]:
    """node_modules/.bin/agency-sandbox in `start` or the nearest folder above it that has one."""
    names = [BIN + ".cmd", BIN] if os.name == "nt" else [BIN]
    folder = os.path.abspath(start)
    while True:
        for name in names:
            candidate = os.path.join(folder, "node_modules", ".bin", name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def sandbox_command() -> list[str]:
    """The command line that starts a sandbox: AGENCY_SANDBOX_CMD, else the installed bin, else the one on PATH."""
    configured = os.environ.get("AGENCY_SANDBOX_CMD", "").strip()
    if configured:
        return shlex.split(configured, posix=os.name != "nt")
    found = _installed_bin(os.getcwd()) or shutil.which(BIN)
    if found:
        return [found]
    raise SandboxNotFound(
        "no agency sandbox to use. Any one of these three ways works:\n"
        "  1. AGENCY_SANDBOX_URL=http://127.0.0.1:8080  attach to a sandbox that already runs (a container, a CI service)\n"
        "  2. AGENCY_SANDBOX_CMD='node /path/to/agency-sandbox/dist/bundle/cli.js'  the command that starts one\n"
        f"  3. install the package in this project (npm install --save-dev ./agency-sandbox-<version>.tgz, or a git dependency):\n"
        f"     its node_modules/.bin/{BIN} is found from {os.getcwd()} upwards, or `{BIN}` on PATH\n"
        "(the package is not on the npm registry yet, so `npx agency-sandbox` cannot fetch it)"
    )


# -- process groups: nothing outlives the test run -------------------------------------------------

_running: "set[Sandbox]" = set()
_handlers_installed = False


def _stop_all() -> None:
    for sandbox in list(_running):
        sandbox.stop()


def _on_signal(signum: int, _frame: Any) -> None:
    _stop_all()
    # then die of the signal as the interpreter would have without this handler
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _stop_at_exit() -> None:
    """Once per interpreter: stop what is still running at exit, on SIGTERM and on SIGHUP.

    SIGINT needs nothing more: it raises KeyboardInterrupt and the interpreter exits through atexit.
    A signal someone else already handles is left to them (their handler decides when to exit).
    """
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(_stop_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, _on_signal)


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs. Where /proc exists, an exited process that
    nobody reaped yet (a zombie, as an orphan stays under an init that does not reap) counts as gone."""
    if os.path.isdir("/proc/self"):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(b")") + 2:].split()  # state, ppid, pgrp, ...
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
        return False
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass


def _group_ended(process: subprocess.Popen, seconds: float) -> bool:
    """Waits up to `seconds` for every process of the started process's group to end."""
    deadline = time.monotonic() + seconds
    while True:
        process.poll()  # reaps our own child, which would otherwise stay in the group as a zombie
        if not _group_alive(process.pid):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


class _Controls:
    """The control calls a test suite uses most, for the default world (Sandbox) or one world (World)."""

    def control(self, verb: str, route: str, body: Any = None, query: Optional[dict] = None) -> Any:
        raise NotImplementedError

    def reset(self, keep: Optional[list[str]] = None) -> Any:
        """Back to the start: data, pending writes, journal, faults, clock, simulator, rate windows."""
        return self.control("POST", "/reset", {"keep": keep} if keep else None)

    def add_fault(self, rule: dict) -> dict:
        return self.control("POST", "/faults", rule)

    def faults(self) -> list[dict]:
        return self.control("GET", "/faults")

    def set_clock(self, now: str, frozen: bool = True) -> dict:
        return self.control("PUT", "/clock", {"now": now, "frozen": frozen})

    def advance_clock(self, seconds: float) -> dict:
        return self.control("POST", "/clock/advance", {"seconds": seconds})

    def clock(self) -> dict:
        return self.control("GET", "/clock")

    def real_clock(self) -> dict:
        return self.control("DELETE", "/clock")

    def requests(self, **filters: Any) -> list[dict]:
        """The journal of vendor requests, oldest first (method, path, agencyId, status, since, limit)."""
        return self.control("GET", "/requests", query=filters)

    def patch_agency(self, agency_id: int, **flags: Any) -> dict:
        return self.control("PATCH", f"/agencies/{agency_id}", flags)

    def writes(self, agency_id: int, **filters: Any) -> list[dict]:
        return self.control("GET", f"/agencies/{agency_id}/writes", query=filters)

    def start_session(self, **options: Any) -> dict:
        """An examiner session recording this world's vendor requests (clientId, name)."""
        return self.control("POST", "/sessions", options)

    def end_session(self, session_id: int) -> dict:
        return self.control("POST", f"/sessions/{session_id}/end")


class Sandbox(_Controls):
    def __init__(self, url: str, process: Optional[subprocess.Popen] = None, token: Optional[str] = None,
                 stderr: Optional[Any] = None) -> None:
        self.url = url.rstrip("/")
        self.process = process
        self.token = token
        self._stderr = stderr

    # -- life cycle ---------------------------------------------------------------------------
    @classmethod
    def attach(cls, url: str, token: Optional[str] = None, timeout: float = 30.0) -> "Sandbox":
        """A sandbox that already runs at `url` (stop() leaves it running)."""
        sandbox = cls(url, token=token)
        sandbox.wait_healthy(timeout)
        return sandbox

    @classmethod
    def start(cls, timeout: float = 30.0) -> "Sandbox":
        """Attach to AGENCY_SANDBOX_URL, or start a sandbox process and wait until it is healthy."""
        token = os.environ.get("AGENCY_SANDBOX_TOKEN")
        attached = os.environ.get("AGENCY_SANDBOX_URL")
        if attached:
            return cls.attach(attached, token, timeout)
        command = sandbox_command()
        # its own file, not a pipe: a pipe nobody reads would stall the sandbox once full
        stderr = tempfile.TemporaryFile()
        # port 0: the sandbox picks a free port and writes {"url":...,"pid":...} to the ready file once listening
        folder = tempfile.mkdtemp(prefix="agency-sandbox-")
        ready_file = os.path.join(folder, "ready.json")
        _stop_at_exit()
        own_group = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP} if os.name == "nt" else {"start_new_session": True}
        try:
            # stdin: a pipe only this interpreter holds; when it ends, even killed, the sandbox stops itself
            process = subprocess.Popen(
                [*command, "serve", "--port", "0", "--db", ":memory:", "--log-level", "warn",
                 "--ready-file", ready_file, "--exit-on-stdin-close"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, **own_group,
            )
        except OSError as e:
            stderr.close()
            shutil.rmtree(folder, ignore_errors=True)
            raise SandboxNotFound(f"could not run {shlex.join(command)}: {e}") from e
        sandbox = cls("", process, token, stderr)
        _running.add(sandbox)
        try:
            sandbox.url = sandbox._wait_ready(ready_file, timeout)
        except BaseException:
            sandbox.stop()
            raise
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return sandbox

    def _wait_ready(self, ready_file: str, timeout: float) -> str:
        """The URL the started sandbox writes to its ready file once it listens."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(ready_file):
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the sandbox exited with {self.process.returncode} before it was listening: {self._stderr_text()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the sandbox did not say where it listens within {timeout} s: {self._stderr_text()}")
            time.sleep(0.05)
        with open(ready_file, encoding="utf-8") as f:
            return json.load(f)["url"]

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the sandbox exited with {self.process.returncode}: {self._stderr_text()}")
            try:
                if self.control("GET", "/health")["status"] == "ok":
                    return
            except (OSError, ControlError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.url}/_sandbox/health did not answer within {timeout} s")
            time.sleep(0.1)

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Ends the sandbox's whole process group: SIGTERM, then SIGKILL after `grace` seconds."""
        process, self.process = self.process, None
        _running.discard(self)
        if process is None:
            return
        try:
            if os.name == "nt":
                if process.poll() is None:
                    subprocess.run(["taskkill", "/T", "/F", "/PID", str(process.pid)], capture_output=True)
                process.wait()
                return
            # the session's id is the started process's pid, whether or not that process still runs
            for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                _signal_group(process.pid, signum)
                if _group_ended(process, wait):
                    break
            process.wait(5)
        finally:
            if process.stdin is not None:
                process.stdin.close()
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None

    # -- HTTP ----------------------------------------------------------------------------------
    def control(self, verb: str, route: str, body: Any = None, query: Optional[dict] = None) -> Any:
        """One control call of the default world (/_sandbox + route); raises ControlError on a 4xx/5xx."""
        return _control(self.url, "/_sandbox", self.token, verb, route, body, query)

    def vendor(self, method: str, path: str, body: Any = None, client_id: str = DEMO_CLIENT_ID,
               client_secret: str = DEMO_CLIENT_SECRET, **query: Any) -> tuple[int, dict, Any]:
        """A partner request (/vendor + path) with Basic auth; returns (status, headers with lower-case names, body)."""
        return _vendor(self.url, _basic(client_id, client_secret), method, path, body, query)

    # -- worlds --------------------------------------------------------------------------------
    def create_world(self, name: Optional[str] = None, ttl_seconds: int = 600, fixture: Optional[dict] = None,
                     from_world: Optional[str] = None) -> "World":
        """A new world of this sandbox (POST /_sandbox/worlds): of the start-up fixture, of `fixture`, or a
        copy of the world `from_world` as it stands. Idle for `ttl_seconds`, the sandbox deletes it."""
        body: dict[str, Any] = {"ttlSeconds": ttl_seconds}
        if name:
            body["name"] = name[:100]
        if fixture is not None:
            body["fixture"] = fixture
        if from_world is not None:
            body["from"] = from_world
        created = _control(self.url, "/_sandbox", self.token, "POST", "/worlds", body)
        return World(self, created)

    def worlds(self) -> list[dict]:
        """Every world of the sandbox, the default one first."""
        return self.control("GET", "/worlds")["worlds"]


class World(_Controls):
    """One world of a sandbox: its credentials, and control calls that reach this world only.

    The vendor API's base URL is the sandbox's; the Basic-auth Client Id picks the world. A test that
    calls `vendor()` as it would on a Sandbox reads and writes this world: `client_id="abc"` means the
    world's copy of abc (`abc@<world id>`), with its secret.
    """

    def __init__(self, sandbox: "Sandbox", created: dict) -> None:
        self.sandbox = sandbox
        self.url = sandbox.url
        self.id: str = created["id"]
        self.name: str = created["name"]
        self.token: str = created["token"]
        self.expires_at: Optional[str] = created.get("expiresAt")
        self.integrations: list[dict] = created["integrations"]

    def __repr__(self) -> str:
        return f"World({self.id!r}, {self.name!r})"

    def credentials(self, client_id: str = DEMO_CLIENT_ID) -> tuple[str, str]:
        """(Client Id, Client Secret) of the world's copy of `client_id` (the first integration when it has no such one)."""
        for integration in self.integrations:
            if integration["clientId"] in (client_id, f"{client_id}@{self.id}"):
                return integration["clientId"], integration["clientSecret"]
        known = ", ".join(i["clientId"] for i in self.integrations)
        raise KeyError(f"world {self.id} has no integration {client_id}; it has {known}")

    def authorization(self, client_id: str = DEMO_CLIENT_ID) -> str:
        """The Authorization header your integration sends to reach this world as `client_id`."""
        return _basic(*self.credentials(client_id))

    def vendor(self, method: str, path: str, body: Any = None, client_id: str = DEMO_CLIENT_ID,
               client_secret: Optional[str] = None, **query: Any) -> tuple[int, dict, Any]:
        """A partner request to this world (/vendor + path); returns (status, headers with lower-case names, body)."""
        world_id, secret = self.credentials(client_id)
        return _vendor(self.url, _basic(world_id, client_secret if client_secret is not None else secret), method, path, body, query)

    def control(self, verb: str, route: str, body: Any = None, query: Optional[dict] = None) -> Any:
        """One control call of this world (/_sandbox/worlds/<id> + route); raises ControlError on a 4xx/5xx."""
        # the sandbox's token opens every world; without one, the world's own token opens this world
        token = self.sandbox.token or self.token
        return _control(self.url, f"/_sandbox/worlds/{urllib.parse.quote(self.id)}", token, verb, route, body, query)

    def delete(self) -> None:
        """Deletes the world: its credentials answer 401 from then on. A world already gone is fine."""
        try:
            _control(self.url, "/_sandbox", self.sandbox.token, "DELETE", f"/worlds/{urllib.parse.quote(self.id)}")
        except ControlError as e:
            if e.status != 404:
                raise


# -- HTTP --------------------------------------------------------------------------------------

def _basic(client_id: str, client_secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()


def _send(method: str, url: str, headers: dict, body: Optional[bytes]) -> tuple[int, dict, Any]:
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


def _query(query: Optional[dict]) -> str:
    q = {k: v for k, v in (query or {}).items() if v is not None}
    return f"?{urllib.parse.urlencode(q)}" if q else ""


def _control(base: str, prefix: str, token: Optional[str], verb: str, route: str, body: Any = None,
             query: Optional[dict] = None) -> Any:
    headers = {"accept": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        headers["content-type"] = "application/json"
        data = json.dumps(body).encode()
    status, _, parsed = _send(verb, f"{base}{prefix}{route}{_query(query)}", headers, data)
    if status >= 400:
        raise ControlError(status, parsed, verb, prefix + route)
    return parsed


def _vendor(base: str, authorization: str, method: str, path: str, body: Any, query: dict) -> tuple[int, dict, Any]:
    headers = {"authorization": authorization, "accept": "application/json"}
    data = None
    if body is not None:
        headers["content-type"] = "application/json"
        data = json.dumps(body).encode()
    return _send(method, f"{base}/vendor{path}{_query(query)}", headers, data)
