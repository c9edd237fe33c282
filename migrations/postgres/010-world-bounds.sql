-- Each created world's bound on its data (null: the instance's SANDBOX_WORLD_MAX_BYTES), and
-- whether its integrations get secrets of the world's own, which every instance makes alike from
-- its token's key (worlds created before this kept their fixture's secrets).
ALTER TABLE sandbox_worlds ADD COLUMN max_bytes bigint;
ALTER TABLE sandbox_worlds ADD COLUMN own_secrets boolean NOT NULL DEFAULT false;
