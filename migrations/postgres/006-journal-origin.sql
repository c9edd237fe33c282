-- Where each journal entry was answered (hosted mode): the instance, and the entry's id in that
-- instance's own journal, which the examiner's records carry. A report names a request by its id
-- in the shared journal (examiner-store.ts, records), found by these: every instance numbers its
-- own journal from 1, so an id of one names another request in the shared journal.
ALTER TABLE journal_entries ADD COLUMN instance text, ADD COLUMN local_id bigint;
CREATE INDEX journal_entries_origin ON journal_entries (world_id, instance, local_id);

ALTER TABLE examiner_shipped ADD COLUMN journal_ids bigint[];
-- 0: the request was not journaled (SANDBOX_JOURNAL_SIZE=0), or the record is a change
ALTER TABLE examiner_records ADD COLUMN instance text, ADD COLUMN local_journal_id bigint NOT NULL DEFAULT 0;
