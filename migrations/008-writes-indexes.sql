-- Two indexes of the writes table that no query uses beyond the agency id, which the table's
-- unique key (agency_id, kind, ref_id) leads with too: the listing of writes filters kind, status
-- and client with optional parameters, which no index serves, and sorts by seq. Each cost every
-- write a B-tree insert and a page in its commit (a log note's commit wrote about 8 pages).
DROP INDEX writes_by_status;
DROP INDEX writes_by_client;
