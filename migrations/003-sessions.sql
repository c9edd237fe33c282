-- Examiner sessions: each records the vendor requests of one test run, to be judged rule by
-- rule. Not part of the world: reset and fixtures leave them alone.
CREATE TABLE examiner_sessions (
  session_id INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT NOT NULL,
  client_id  TEXT,                                -- NULL: requests of every integration
  started_ms INTEGER NOT NULL,                    -- sandbox clock
  ended_ms   INTEGER,                             -- NULL while open
  recorded   INTEGER NOT NULL DEFAULT 0,
  capped     INTEGER NOT NULL DEFAULT 0 CHECK (capped IN (0, 1))
) STRICT;

-- Recorded requests, appended in chunks (one per flush): a JSON array of requests in arrival
-- order, numbered from first_seq, compressed (raw deflate): one small insert per flush.
CREATE TABLE examiner_records (
  chunk_id   INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES examiner_sessions (session_id) ON DELETE CASCADE,
  first_seq  INTEGER NOT NULL,
  count      INTEGER NOT NULL,
  requests   BLOB NOT NULL
) STRICT;
CREATE INDEX examiner_records_by_session ON examiner_records (session_id, first_seq);

-- What a partner declared it has stored for an agency (the latest post per agency wins):
-- clients is a JSON array of [clientNumber, modifiedMs] pairs.
CREATE TABLE examiner_mirrors (
  session_id INTEGER NOT NULL REFERENCES examiner_sessions (session_id) ON DELETE CASCADE,
  agency_id  INTEGER NOT NULL,
  up_to      INTEGER,
  posted_ms  INTEGER NOT NULL,
  clients    TEXT NOT NULL,
  PRIMARY KEY (session_id, agency_id)
) STRICT;
