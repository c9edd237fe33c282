-- Covering index for the changed-clients listing with asOf: ids (and the office filter) come
-- from the index alone, without a lookup of each row in the table, whose rows are kilobytes of
-- JSON. An import pins each deleted client's deletion time with about 25 such listings, each
-- reading every client deleted after the time it asks about. It replaces clients_changed, of
-- which it is an extension.
DROP INDEX clients_changed;
CREATE INDEX clients_changed_ids ON clients (agency_id, deleted, modified_ms, client_number, office_id);
