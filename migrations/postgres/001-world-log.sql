-- Each world's data as a log: a snapshot (the SQLite database whole) followed by the commits made
-- since, in order. Every instance holds a replica of the world and replays what it has not seen.
CREATE TABLE world_log (
  world_id   text        NOT NULL,
  seq        bigint      NOT NULL,
  kind       text        NOT NULL CHECK (kind IN ('snapshot', 'commit')),
  body       bytea       NOT NULL,
  -- the instruments a commit changed beside the data (the create-client rate window)
  effects    jsonb,
  instance   text        NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (world_id, seq)
);

-- The last entry of each world's log and its latest snapshot (older entries are deleted).
CREATE TABLE world_head (
  world_id     text   PRIMARY KEY,
  seq          bigint NOT NULL,
  snapshot_seq bigint NOT NULL
);
