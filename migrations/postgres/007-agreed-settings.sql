-- Settings every instance of a hosted sandbox must share (the key its reports are signed with,
-- and later the worlds' caps): the first instance that has one records its value; an instance
-- started with another value refuses to start. Changing one is an administrator's step
-- (agency-sandbox rotate-signing-key), never a side effect of starting an instance.
CREATE TABLE sandbox_agreed_settings (
  name           text   PRIMARY KEY,
  value          text   NOT NULL,
  recorded_at_ms bigint NOT NULL,
  -- the instance (host:pid:random) or the command that recorded it
  recorded_by    text   NOT NULL
);
