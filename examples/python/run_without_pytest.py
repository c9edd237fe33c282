"""Runs test_partner_sync.py with the standard library only (no pytest), the way conftest.py would:
one sandbox for the run, a clean slate before each test. Exit code 0 when every test passed."""
import inspect
import sys
import traceback

import test_partner_sync
from agency_sandbox import Sandbox


def main() -> int:
    sandbox = Sandbox.start()
    passed = failed = 0
    try:
        for name, test in inspect.getmembers(test_partner_sync, inspect.isfunction):
            if not name.startswith("test_"):
                continue
            sandbox.reset()
            try:
                test(sandbox)
                passed += 1
                print(f"ok {name}")
            except Exception:
                failed += 1
                print(f"FAILED {name}\n{traceback.format_exc()}")
    finally:
        sandbox.stop()
    print(f"{passed} of {passed + failed} example tests passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
