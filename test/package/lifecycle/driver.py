"""Starts a sandbox through examples/python/agency_sandbox.py, prints `started <pid> <url>`, then,
on a line from stdin, by the mode in argv[1]: `stop` stops it and prints `stopped`; `exit` exits
without stopping it (the fixture's atexit hook must); `wait` ignores the line and waits for a
signal to end the process."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python"))
from agency_sandbox import Sandbox  # noqa: E402

sandbox = Sandbox.start()
print("started", sandbox.process.pid, sandbox.url, flush=True)
mode = sys.argv[1]
if mode == "stop":
    sys.stdin.readline()
    sandbox.stop()
    print("stopped", flush=True)
elif mode == "exit":
    sys.stdin.readline()
else:
    while True:
        time.sleep(60)
