-- Offices carry `archived` in 4.0: an archived office is still listed (partners must be able
-- to resolve the office of older clients) but cannot be the office of a new client.
ALTER TABLE offices ADD COLUMN archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1));
