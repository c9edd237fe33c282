-- Examiner sessions of every instance, in one place (hosted mode). A session's requests are the
-- requests recorded by any instance: each instance records them in memory, ships them to
-- examiner_shipped (every 100 ms while sessions record, and when a journal read or a session's
-- call announces a read), and the reader that moves the journal moves them too, in the order the
-- requests arrived, into examiner_records, where their position (`seq`) is given. A session is a
-- range of positions and a Client Id; `mark()` takes a position under the move's lock, so every
-- request moved before it is before the session's start (or end, or mirror), every one after it after.
CREATE SEQUENCE examiner_positions;

CREATE TABLE examiner_sessions (
  session_id serial           PRIMARY KEY,
  world_id   text             NOT NULL,
  name       text             NOT NULL,
  client_id  text,
  started_ms double precision NOT NULL,
  start_seq  bigint           NOT NULL,
  ended_ms   double precision,
  end_seq    bigint,
  ended_by   text,
  -- counted when the session ended (an open session's count is read from its records)
  recorded   integer          NOT NULL DEFAULT 0,
  capped     boolean          NOT NULL DEFAULT false,
  -- the report it ended with, as JSON text (kept once; null while open or being computed)
  report     text
);
CREATE INDEX examiner_sessions_world ON examiner_sessions (world_id, session_id);

CREATE TABLE examiner_mirrors (
  session_id integer          NOT NULL REFERENCES examiner_sessions ON DELETE CASCADE,
  agency_id  bigint           NOT NULL,
  up_to      double precision,
  posted_ms  double precision NOT NULL,
  posted_seq bigint           NOT NULL,
  -- JSON array of [clientNumber, modifiedMs]
  clients    text             NOT NULL,
  PRIMARY KEY (session_id, agency_id)
);

-- One recorded request (or a change of a client, `change`) as a line of the examiner's format
-- (src/domain/examiner/codec.ts), its times absolute.
CREATE TABLE examiner_records (
  world_id  text    NOT NULL,
  seq       bigint  NOT NULL DEFAULT nextval('examiner_positions'),
  client_id text,
  change    boolean NOT NULL,
  line      text    NOT NULL,
  PRIMARY KEY (world_id, seq)
);

-- Records shipped and not yet moved, one row per ship of one instance for one world: each
-- record's arrival (`real_ms`, as journal_shipped's), Client Id and kind in arrays, and their lines
-- as one text (a line holds no line break), so a ship costs one row however many it carries.
CREATE TABLE examiner_shipped (
  instance        text               NOT NULL,
  world_id        text               NOT NULL,
  first_local_seq bigint             NOT NULL,
  real_ms         double precision[] NOT NULL,
  client_ids      text[]             NOT NULL,
  changes         boolean[]          NOT NULL,
  lines           text               NOT NULL
);
