-- One owner per world (hosted mode): each world, the default one included, is served by one
-- instance at a time, the one holding its lease here (src/db/postgres/owners.ts). The owner
-- renews the lease while it serves; a claim takes a world whose lease ran out, and bumps the
-- epoch, which every append to the world's log checks (world-log.ts): an owner that lost its
-- lease cannot append. The row stays when a lease ends: the next claim counts on from its epoch.
CREATE TABLE world_owners (
  world_id   text        PRIMARY KEY,
  instance   text        NOT NULL,
  -- how the other instances reach the owner (SANDBOX_INSTANCE_URL), to forward the world's requests
  address    text        NOT NULL,
  epoch      bigint      NOT NULL,
  expires_at timestamptz NOT NULL,
  -- what the world's data holds, as its owner last wrote it (GET /_sandbox/worlds lists it from here)
  facts      jsonb
);

-- The examiner's records (its sessions, their requests and mirrors) live with the world's owner in
-- a database of their own, kept in the world's log beside the data: each entry's steps of it, or,
-- in a snapshot, its pages. The instruments' whole state (clock, fault rules and their counts, the
-- create-client window, the simulator) as JSON text, whenever it changed: bytes, not jsonb, so any
-- text a partner sent (a NUL, a lone surrogate, escaped in JSON) is kept as it came. The effects a
-- commit had on the instruments of every replica are gone: a world's log of an older version
-- starts from its data, its instruments at their defaults.
ALTER TABLE world_log ADD COLUMN records bytea, ADD COLUMN state bytea, DROP COLUMN effects;

-- What every instance used to share and each world's owner now keeps: the request journal (in the
-- owner's memory), the examiner's sessions (above), the fault rules' counts (in the world's log,
-- with the rules), the readers of commits and the log's heads (an owner is the one writer).
DROP TABLE world_head;
DROP TABLE world_fault_counts;
DROP TABLE journal_entries;
DROP TABLE journal_shipped;
DROP TABLE journal_instances;
DROP SEQUENCE journal_reads;
DROP TABLE examiner_mirrors;
DROP TABLE examiner_sessions;
DROP TABLE examiner_records;
DROP TABLE examiner_shipped;
DROP SEQUENCE examiner_positions;
DROP TABLE sandbox_readers;
