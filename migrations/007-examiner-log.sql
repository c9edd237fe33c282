-- Recorded requests are kept once per world, in one log its open sessions share: recording costs
-- the same with one open session or a thousand. A session is a range of the log (from start_seq,
-- to end_seq once ended) and a Client Id; when it ends, its report is computed once and kept, so
-- its verdict never changes with later data. Sessions recorded before this version keep their own
-- chunks in examiner_records (start_seq NULL).
CREATE TABLE examiner_log (
  chunk_id  INTEGER PRIMARY KEY,
  world_id  TEXT NOT NULL,
  first_seq INTEGER NOT NULL,
  count     INTEGER NOT NULL,
  requests  BLOB NOT NULL
) STRICT;
CREATE INDEX examiner_log_by_world ON examiner_log (world_id, first_seq);

ALTER TABLE examiner_sessions ADD COLUMN start_seq INTEGER;
ALTER TABLE examiner_sessions ADD COLUMN end_seq INTEGER;
ALTER TABLE examiner_sessions ADD COLUMN ended_by TEXT;
ALTER TABLE examiner_sessions ADD COLUMN report TEXT;
-- where in the log a mirror was posted: what the partner could know is judged by order, not by
-- time, which stands still under a frozen clock
ALTER TABLE examiner_mirrors ADD COLUMN posted_seq INTEGER;
