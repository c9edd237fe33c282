-- Instances that answer reads from the commits they heard announced (hosted mode, strict reads;
-- src/db/postgres/commit-delivery.ts). Each registers on its listening connection before it reads
-- the heads there, and renews its lease while it listens; a writer acknowledges a commit once every
-- instance registered, alive (its listening connection's backend still runs) and within its lease
-- has answered a ping sent after the commit, or once that instance's lease has run out (an instance
-- past its lease asks PostgreSQL for the heads again).
CREATE TABLE sandbox_readers (
  instance     text        PRIMARY KEY,
  listener_pid integer     NOT NULL,
  until        timestamptz NOT NULL
);
