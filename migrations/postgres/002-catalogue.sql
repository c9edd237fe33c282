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

CREATE TABLE sandbox_worlds (
  world_id      text   PRIMARY KEY,
  name          text   NOT NULL,
  tenant_id     text   REFERENCES sandbox_tenants ON DELETE CASCADE,
  token_key     text   NOT NULL UNIQUE,
  source        text   NOT NULL,
  start         bytea  NOT NULL,
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
