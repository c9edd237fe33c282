"""What a partner's test suite checks with the sandbox: run with `pytest` (or `python3 run_without_pytest.py`)."""
from partner_sync import sync_agency

AGENCY = 1001


def test_first_sync_mirrors_every_live_client_in_batches_of_200(sandbox):
    mirror = {}
    read = sync_agency(sandbox, AGENCY, mirror)
    assert len(mirror) == len(read) > 200
    batches = sandbox.requests(method="POST", path="/vendor/agency/1001/clients")
    assert len(batches) == (len(read) + 199) // 200
    assert all(entry["status"] == 200 for entry in batches)


def test_a_503_is_retried(sandbox):
    sandbox.add_fault({"match": {"method": "POST", "path": "/vendor/agency/*/clients"}, "effect": {"status": 503}, "times": 1})
    mirror = {}
    sync_agency(sandbox, AGENCY, mirror)
    statuses = [e["status"] for e in sandbox.requests(method="POST")]
    assert statuses[0] == 503 and statuses[1] == 200
    assert len(mirror) > 200


def test_the_next_sync_reads_only_what_changed_since_the_last(sandbox):
    sandbox.set_clock("2027-01-01T00:00:00Z", frozen=True)
    mirror = {}
    sync_agency(sandbox, AGENCY, mirror)
    last_sync = "2027-01-01T00:00:00Z"
    sandbox.control("POST", "/clock/advance", {"seconds": 60})
    sandbox.control("PATCH", f"/agencies/{AGENCY}/clients/1000", {"details": {"status": "DeadFile"}})
    assert sync_agency(sandbox, AGENCY, mirror, as_of=last_sync) == [1000]
    assert mirror[1000].startswith("2027-01-01T00:01:00")


def test_a_disconnected_agency_saves_writes_for_later(sandbox):
    sandbox.patch_agency(1004, connected=False)
    note = {"refId": "6f1c2b1e-8d4a-4c39-9b1e-2a7d5b0c9e11", "ts": "2026-11-02T09:00:00Z", "channel": 29, "note": "Called back"}
    status, _, text = sandbox.vendor("POST", "/agency/1004/client/1000/log", note, version="4.0")
    assert status == 202, text
    assert sandbox.writes(1004, status="pending")[0]["refId"] == note["refId"]
    sandbox.patch_agency(1004, connected=True)
    assert sandbox.writes(1004, status="applied")[0]["refId"] == note["refId"]


def test_reset_is_a_clean_slate(sandbox):
    sandbox.add_fault({"effect": {"status": 500}})
    sandbox.set_clock("2027-01-01T00:00:00Z", frozen=True)
    sandbox.vendor("GET", "/agencies", version="4.0")
    sandbox.reset()
    assert sandbox.control("GET", "/faults") == []
    assert sandbox.control("GET", "/clock")["frozen"] is False
    assert sandbox.requests() == []
