-- Writes partners send (log notes, attachments, receipts) and the log notes of created
-- clients, in arrival order. A write is pending while its agency is disconnected.
CREATE TABLE writes (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  agency_id     INTEGER NOT NULL REFERENCES agencies (agency_id) ON DELETE CASCADE,
  client_number INTEGER NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('log', 'attachment', 'receipt', 'client')),
  ref_id        TEXT NOT NULL COLLATE NOCASE,
  integration   TEXT NOT NULL,
  api_version   TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'applied')),
  fingerprint   TEXT NOT NULL,
  received_at   TEXT NOT NULL,
  applied_at    TEXT,
  data          TEXT NOT NULL,              -- JSON: the decoded fields, task included
  UNIQUE (agency_id, kind, ref_id)
) STRICT;
CREATE INDEX writes_by_status ON writes (agency_id, status, seq);
CREATE INDEX writes_by_client ON writes (agency_id, client_number, seq);

CREATE TABLE attachment_content (
  write_seq INTEGER PRIMARY KEY REFERENCES writes (seq) ON DELETE CASCADE,
  content   BLOB NOT NULL
) STRICT;
