-- The id of each recent append to a world's log, and of each change of the catalogue, written in
-- the same transaction (src/db/postgres/world-log.ts, outcomes.ts). When the answer to a COMMIT is
-- lost (the connection failed or the server did not answer in time), the writer looks for its id
-- from a new connection: there, the commit was applied; absent once the transaction has ended (the
-- writer waits for its advisory lock, keyed by the id), nothing was. A snapshot that compacts the
-- log leaves these rows alone; they are deleted once older than the longest anyone may look.
CREATE TABLE sandbox_appends (
  append_id  text        PRIMARY KEY,
  -- the world whose log it was appended to, or '~catalogue'
  subject    text        NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_appends_age ON sandbox_appends (written_at);
