"""Stands in for your integration: the sync loop a partner writes against the Agency Integration API.

It lists the changed client ids of an agency (all of them on the first sync), reads them in
batches of 200 and keeps a mirror {clientNumber: modified}. A 429 or 5xx is retried after
Retry-After (or a short backoff), as the live service expects.
"""
from __future__ import annotations

import time
from typing import Any, Optional

BATCH = 200


def call_with_retry(sandbox: Any, method: str, path: str, body: Any = None, attempts: int = 5, **query: Any) -> Any:
    for attempt in range(attempts):
        status, headers, answer = sandbox.vendor(method, path, body, **query)
        if status == 429 or status >= 500:
            time.sleep(float(headers.get("retry-after", "0.1")))
            continue
        if status >= 400:
            raise RuntimeError(f"{method} {path} answered {status}: {answer}")
        return answer
    raise RuntimeError(f"{method} {path} still failing after {attempts} attempts")


def sync_agency(sandbox: Any, agency_id: int, mirror: dict[int, str], as_of: Optional[str] = None) -> list[int]:
    """Brings `mirror` up to date; returns the client numbers read."""
    query = {"version": "4.0", "asOf": as_of}
    changed = call_with_retry(sandbox, "GET", f"/agency/{agency_id}/clients", **query)
    for start in range(0, len(changed), BATCH):
        batch = changed[start:start + BATCH]
        clients = call_with_retry(sandbox, "POST", f"/agency/{agency_id}/clients", {"clientNumbers": batch}, version="4.0")
        for client in clients:
            mirror[client["clientNumber"]] = client["details"]["modified"]
    for deleted in call_with_retry(sandbox, "GET", f"/agency/{agency_id}/clients", version="4.0", asOf=as_of, deleted="true"):
        mirror.pop(deleted, None)
    return changed
