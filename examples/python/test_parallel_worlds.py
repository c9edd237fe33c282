"""Tests that run in parallel against one sandbox, each in a world of its own: `pytest -n 4` (pytest-xdist).

Each test writes, adds faults, moves the clock and resets as it likes; nothing it does reaches another
test's world. The assertions are exact (counts, numbers, times), so another test's actions leaking
into this world would fail them.
"""
import email.utils
import uuid

import pytest

from partner_sync import sync_agency

AGENCY = 1001
NEXT_CLIENT = 1260  # agency 1001's highest client number + 1: the number every fresh world gives next
NEW_CLIENT = {
    "People": [{"FirstName": "Ada", "LastName": "Lovelace", "MainContactType": "First"}],
    "Log": {"Channel": 29, "Note": "New client from the partner portal", "TS": "2026-11-20T10:00:00Z"},
}


def note(text: str) -> dict:
    return {"refId": str(uuid.uuid4()), "ts": "2026-11-20T10:00:00Z", "channel": 29, "note": text}


@pytest.mark.parametrize("notes", range(1, 7))
def test_writes_are_this_worlds_alone(world, notes):
    for i in range(notes):
        status, _, text = world.vendor("POST", f"/agency/{AGENCY}/client/1000/log", note(f"note {i}"), version="4.0")
        assert status == 200, text
    status, _, created = world.vendor("POST", f"/agency/{AGENCY}/client", NEW_CLIENT, version="4.0")
    assert status == 200, created
    assert created["clientNumber"] == NEXT_CLIENT, "no other test created a client in this world"
    writes = world.writes(AGENCY)
    assert [w["kind"] for w in writes] == ["log"] * notes + ["client"]
    assert {w["integration"] for w in writes} == {f"abc@{world.id}"}
    assert len(world.requests(method="POST")) == notes + 1, "the journal holds this test's requests only"


def test_a_fault_answers_this_worlds_requests_only(world, sandbox_session):
    world.add_fault({"match": {"path": "/vendor/agencies"}, "effect": {"status": 503, "body": {"world": world.id}}})
    status, _, body = world.vendor("GET", "/agencies", version="4.0")
    assert (status, body) == (503, {"world": world.id})
    other = sandbox_session.create_world(name="a second world of the same test", ttl_seconds=60)
    try:
        assert other.vendor("GET", "/agencies", version="4.0")[0] == 200, "another world has no fault"
        assert other.faults() == []
    finally:
        other.delete()
    assert [f["hits"] for f in world.faults()] == [1]


@pytest.mark.parametrize("year", [2027, 2031, 2040])
def test_the_clock_is_this_worlds_own(world, year):
    world.set_clock(f"{year}-01-01T00:00:00Z", frozen=True)
    mirror: dict[int, str] = {}
    sync_agency(world, AGENCY, mirror)
    world.advance_clock(60)
    world.control("PATCH", f"/agencies/{AGENCY}/clients/1000", {"details": {"status": "DeadFile"}})
    assert sync_agency(world, AGENCY, mirror, as_of=f"{year}-01-01T00:00:00Z") == [1000]
    assert mirror[1000].startswith(f"{year}-01-01T00:01:00")
    _, headers, _ = world.vendor("GET", "/agencies", version="4.0")
    assert email.utils.parsedate_to_datetime(headers["date"]).isoformat() == f"{year}-01-01T00:01:00+00:00", "Date reads this world's clock"


def test_reset_within_a_test_returns_this_world_to_its_start(world):
    world.set_clock("2030-06-01T00:00:00Z")
    world.add_fault({"match": {"path": "/vendor/agency/*/client/*"}, "effect": {"status": 500}})
    assert world.vendor("POST", f"/agency/{AGENCY}/client", NEW_CLIENT, version="4.0")[2]["clientNumber"] == NEXT_CLIENT
    world.reset()
    assert world.writes(AGENCY) == [] and world.faults() == [] and world.requests() == []
    assert world.clock()["frozen"] is False
    assert world.vendor("POST", f"/agency/{AGENCY}/client", NEW_CLIENT, version="4.0")[2]["clientNumber"] == NEXT_CLIENT, \
        "the number is free again after the reset"


def test_a_first_sync_reads_in_batches_of_200(world):
    mirror: dict[int, str] = {}
    read = sync_agency(world, AGENCY, mirror)
    assert len(mirror) == len(read) > 200
    batches = world.requests(method="POST", path=f"/vendor/agency/{AGENCY}/clients")
    assert len(batches) == (len(read) + 199) // 200, "exactly this test's batches"
