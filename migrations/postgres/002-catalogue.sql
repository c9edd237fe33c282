-- The tenants of a partner programme and the worlds created, shared by every instance. Each
-- world's data is its log (001); its row holds what the world is, and its start (what a reset
-- returns it to). Every change of either table bumps the catalogue's version in the same
-- transaction: an instance behind it reloads the two tables before it answers.
CREATE TABLE sandbox_tenants (
  tenant_id     text    PRIMARY KEY,
  name          text    NOT NULL,
  max_worlds    integer NOT NULL,
  created_at_ms bigint  NOT NULL,
  -- the SHA-256 of its token (the token itself is given once, to its creator)
  token_key     text    NOT NULL UNIQUE
);

-- Worlds' starts (what a reset returns a world to: a snapshot of its database as it began), by
-- their SHA-256: the worlds made from one fixture share one, written once.
CREATE TABLE sandbox_world_starts (
  digest text  PRIMARY KEY,
  body   bytea NOT NULL
);

CREATE TABLE sandbox_worlds (
  world_id      text   PRIMARY KEY,
  name          text   NOT NULL,
  tenant_id     text   REFERENCES sandbox_tenants ON DELETE CASCADE,
  token_key     text   NOT NULL UNIQUE,
  source        text   NOT NULL,
  start_digest  text   NOT NULL REFERENCES sandbox_world_starts,
  ttl_ms        bigint NOT NULL,
  created_at_ms bigint NOT NULL,
  -- the latest use any instance wrote: idleness, and so expiry, is decided here
  last_used_ms  bigint NOT NULL
);
CREATE INDEX sandbox_worlds_by_tenant ON sandbox_worlds (tenant_id);

CREATE TABLE sandbox_catalogue (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version  bigint  NOT NULL
);
INSERT INTO sandbox_catalogue (only_row, version) VALUES (true, 0);

-- A snapshot without a body is the world's start: a world begins so, and need not write its data twice.
ALTER TABLE world_log ALTER COLUMN body DROP NOT NULL;

-- The counts of each world's fault rules (the rules travel with the world's log): every instance
-- counts a match and a hit here, so `times`, `every` and `probability` hold across instances.
CREATE TABLE world_fault_counts (
  world_id  text    NOT NULL,
  rule_id   text    NOT NULL,
  matched   bigint  NOT NULL DEFAULT 0,
  hits      bigint  NOT NULL DEFAULT 0,
  exhausted boolean NOT NULL DEFAULT false,
  PRIMARY KEY (world_id, rule_id)
);
