-- One process holds many worlds. This database holds the default world; the others live in
-- memory, each in a database of its own, but their examiner sessions are kept here, by world.
-- Sessions of worlds that are gone (they end with the process) are removed at start-up.
ALTER TABLE examiner_sessions ADD COLUMN world_id TEXT NOT NULL DEFAULT 'default';
CREATE INDEX examiner_sessions_by_world ON examiner_sessions (world_id, ended_ms);
