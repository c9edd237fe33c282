-- The sandbox world: integrations, agencies and their subscriptions, offices, users, clients.
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE integrations (
  client_id     TEXT PRIMARY KEY,
  client_secret TEXT NOT NULL,
  name          TEXT NOT NULL
) STRICT;

CREATE TABLE agencies (
  agency_id         INTEGER PRIMARY KEY,
  name              TEXT NOT NULL,
  active            INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  connected         INTEGER NOT NULL DEFAULT 1 CHECK (connected IN (0, 1)),
  supports_includes INTEGER NOT NULL DEFAULT 1 CHECK (supports_includes IN (0, 1)),
  default_office_id INTEGER NOT NULL,
  default_users     TEXT NOT NULL DEFAULT '{}'   -- JSON {role: userId}
) STRICT;

CREATE TABLE subscriptions (
  client_id  TEXT NOT NULL REFERENCES integrations (client_id) ON DELETE CASCADE,
  agency_id  INTEGER NOT NULL REFERENCES agencies (agency_id) ON DELETE CASCADE,
  scopes     TEXT NOT NULL DEFAULT '[]',        -- JSON array of scope names
  opted_out  INTEGER NOT NULL DEFAULT 0 CHECK (opted_out IN (0, 1)),
  position   INTEGER NOT NULL DEFAULT 0,        -- order within the integration's fixture entry
  PRIMARY KEY (client_id, agency_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE offices (
  agency_id          INTEGER NOT NULL REFERENCES agencies (agency_id) ON DELETE CASCADE,
  office_id          INTEGER NOT NULL,
  office_description TEXT NOT NULL,
  sub_agency_name    TEXT NOT NULL,
  primary_office     INTEGER NOT NULL CHECK (primary_office IN (0, 1)),
  address_line1      TEXT NOT NULL,
  address_line2      TEXT NOT NULL,
  city               TEXT NOT NULL,
  state              TEXT NOT NULL,
  zipcode            TEXT NOT NULL,
  PRIMARY KEY (agency_id, office_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE users (
  agency_id   INTEGER NOT NULL REFERENCES agencies (agency_id) ON DELETE CASCADE,
  user_id     INTEGER NOT NULL,
  username    TEXT NOT NULL CHECK (length(username) = 3),
  first_name  TEXT,
  last_name   TEXT,
  email       TEXT,
  home_office INTEGER,
  active      INTEGER NOT NULL CHECK (active IN (0, 1)),
  PRIMARY KEY (agency_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX users_by_email ON users (agency_id, email COLLATE NOCASE);

-- A client keeps each data group as the JSON the vendor API answers (precomputed per group),
-- plus the columns the queries filter on.
CREATE TABLE clients (
  agency_id     INTEGER NOT NULL REFERENCES agencies (agency_id) ON DELETE CASCADE,
  client_number INTEGER NOT NULL,
  deleted       INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
  modified_ms   INTEGER NOT NULL,               -- details.modified as epoch milliseconds
  office_id     INTEGER NOT NULL,
  details       TEXT NOT NULL,
  people        TEXT NOT NULL DEFAULT '[]',
  contacts      TEXT NOT NULL DEFAULT '[]',
  claims        TEXT NOT NULL DEFAULT '[]',
  policies      TEXT NOT NULL DEFAULT '[]',
  invoices      TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (agency_id, client_number)
) STRICT;
CREATE INDEX clients_changed ON clients (agency_id, deleted, modified_ms);

-- Policies of each client, for search by policy number and write-side checks.
CREATE TABLE policies (
  agency_id     INTEGER NOT NULL,
  client_number INTEGER NOT NULL,
  policy_id     TEXT NOT NULL COLLATE NOCASE,
  policy_number TEXT NOT NULL,
  policy_index  INTEGER NOT NULL,
  PRIMARY KEY (agency_id, client_number, policy_id),
  FOREIGN KEY (agency_id, client_number) REFERENCES clients (agency_id, client_number) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
CREATE INDEX policies_by_number ON policies (agency_id, policy_number);
-- Covering index for the full changed-clients listing (ids in ascending order, no table lookups).
CREATE INDEX clients_ids ON clients (agency_id, deleted, client_number, office_id);
