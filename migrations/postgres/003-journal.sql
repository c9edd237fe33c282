-- The request journal of every instance, in one place (hosted mode). Each instance journals the
-- requests it answers in its own memory and ships them to journal_shipped when a journal is read:
-- the reader takes a number from journal_reads and announces it, waits until every instance alive
-- has shipped what it had answered by then (journal_instances.shipped_read), then moves what was
-- shipped into journal_entries in the order the requests arrived, under one lock, and reads.
-- Ids are given in that move, so they rise in the order of the answers and a reader polling with
-- `since` misses none.
CREATE SEQUENCE journal_reads;

CREATE TABLE journal_entries (
  id        bigserial        PRIMARY KEY,
  world_id  text             NOT NULL,
  -- the sandbox clock's time of the answer, and what the journal's filters select by
  at_ms     double precision NOT NULL,
  method    text             NOT NULL,
  -- the path the journal's glob filter matches (by the reader)
  path      text             NOT NULL,
  agency_id bigint,
  status    integer          NOT NULL,
  -- the entry's JSON text without its id, and its size (the journal's byte budget counts it)
  entry     text             NOT NULL,
  bytes     integer          NOT NULL
);
CREATE INDEX journal_entries_world ON journal_entries (world_id, id);

-- Entries shipped and not yet moved into journal_entries: `real_ms` is when the request arrived
-- (the instance's wall clock; never before an entry it recorded earlier), `local_id` its order there.
CREATE TABLE journal_shipped (
  instance  text             NOT NULL,
  local_id  bigint           NOT NULL,
  real_ms   double precision NOT NULL,
  world_id  text             NOT NULL,
  at_ms     double precision NOT NULL,
  method    text             NOT NULL,
  path      text             NOT NULL,
  agency_id bigint,
  status    integer          NOT NULL,
  entry     text             NOT NULL
);

-- Instances alive (seen within the last seconds, by the database's clock) and the last read each
-- has shipped for.
CREATE TABLE journal_instances (
  instance     text        PRIMARY KEY,
  seen         timestamptz NOT NULL DEFAULT now(),
  shipped_read bigint      NOT NULL
);
