import { SETTINGS } from './config.js'

/** What `agency-sandbox <command> --help` prints. */
export const HELP: Record<string, string> = {
  main: `agency-sandbox: a local sandbox of the Agency Integration API

Usage: agency-sandbox <command> [options]

Commands:
  serve               start the sandbox (default command)
  validate            check a fixture file and print its errors, grouped by rule
  generate            write a generated fixture of any size
  report              print an ended examiner session's report; exit 1 when a finding reaches --fail-on, or on no-evidence
  verify              check a signed examiner report with the sandbox's public keys; exit 0 only for a valid pass
  rotate-signing-key  make another key a hosted programme's signing key (recorded in PostgreSQL)
  import              read what an integration sees on a running instance into a fixture
  compare             send the same read-only requests to two instances and report every difference

Run agency-sandbox <command> --help for its options.
Exit codes: 0 success, 1 failure (invalid fixture, start-up error), 2 usage error.`,
  serve: `Usage: agency-sandbox serve [options]

Options (each overrides its environment setting):
  --port N           PORT
  --host ADDRESS     HOST
  --db FILE          SANDBOX_DB (a file, or :memory:)
  --fixtures FILE    SANDBOX_FIXTURES
  --reset-on-start   SANDBOX_RESET_ON_START=true (seed from the fixture even over existing data)
  --log-level LEVEL  LOG_LEVEL
  --control-token T  SANDBOX_CONTROL_TOKEN
  --allowed-hosts H  SANDBOX_ALLOWED_HOSTS (names the control API answers besides localhost and IP addresses)
  --journal-size N   SANDBOX_JOURNAL_SIZE
  --journal-bytes N  SANDBOX_JOURNAL_BYTES
  --signing-key FILE SANDBOX_SIGNING_KEY (an Ed25519 private key, PEM: ended sessions' reports are signed)
  --database URL     SANDBOX_DATABASE_URL (postgres://…: hosted mode, instances share the default world)

For a program that starts the sandbox (no environment setting):
  --ready-file PATH       once listening, write {"url":…,"pid":…} to PATH (written beside it, then
                          renamed: never read half written); removed when the sandbox stops
  --exit-on-stdin-close   stop, as on SIGTERM, when standard input ends: give the sandbox a pipe
                          as stdin and it stops when the program that holds the pipe ends, even killed

Once listening, serve prints one line {"url":"http://127.0.0.1:PORT","pid":N} on stdout when
stdout is not a terminal or the port is 0: the only stdout line that begins {"url": (JSON log
lines begin {"level":). Keep reading stdout after it (or send it to a file): a full pipe stalls
the sandbox.

Environment settings:
${settingsHelp()}`,
  report: `Usage: agency-sandbox report --url URL --session ID [--world ID] [options]

Fetches the report an ended examiner session kept (GET /_sandbox/sessions/ID/report, or
/_sandbox/worlds/WORLD/sessions/ID/report) from a running sandbox and prints it: the verdict
and its evidence, each finding with its fix and example requests, the sync checks, coverage,
every rule's outcome, the world and the judge. The exit code fails a CI step when a finding
reaches --fail-on, or when the run gave nothing to judge (verdict no-evidence).

Options:
  --url URL                        the sandbox, e.g. http://127.0.0.1:8080
  --session ID                     the session (its id is in the answer of POST …/sessions)
  --world ID                       the world the session belongs to (default: the default world)
  --format text|json|junit|html    the form printed (default text); junit: one test case per rule
  --out FILE                       write the report to FILE instead; json: the bytes served, which
                                   a signature covers (printed, terminal controls are escaped)
  --fail-on error|warning          the lowest severity that fails (default error)
  --token T                        the control token: the sandbox's (SANDBOX_CONTROL_TOKEN), a
                                   tenant's, or the world's

Exit codes: 0 no finding at that severity, 1 a finding at it, no evidence, a session still open,
or the report cannot be read, 2 usage error.`,
  verify: `Usage: agency-sandbox verify FILE --key public.pem

Checks a signed examiner report (JSON, from a sandbox with SANDBOX_SIGNING_KEY) offline, byte
for byte as the sandbox served it, and prints one line: valid (verdict, session, world and
tenant, signer, key id, judge), or why it is not.
  --key FILE   the sandbox's public keys, PEM: one key, or the current and previous keys
               (GET /_sandbox/signing-keys?format=pem, or its JSON); a private key works too

Exit codes: 0 valid and verdict pass, 2 valid with another verdict (warn, fail, no-evidence),
1 not valid (a duplicate key, not as signed, unsigned, unknown algorithm, another key, tampered,
not a report, unreadable) or a usage error.`,
  'rotate-signing-key': `Usage: agency-sandbox rotate-signing-key --database URL --signing-key new-key.pem

In hosted mode the first instance that signs reports records its key's id in PostgreSQL, and an
instance started with another key refuses to start. This records the new key's id instead: the
administrator's step of a rotation (docs/key-custody.md). Restart every instance with the new key
(SANDBOX_SIGNING_KEY) and the previous public keys (SANDBOX_SIGNING_KEYS_PREVIOUS).
  --database URL        the programme's PostgreSQL (default: SANDBOX_DATABASE_URL)
  --signing-key FILE    the new Ed25519 private key, PEM (default: SANDBOX_SIGNING_KEY)

Exit codes: 0 recorded, 1 failure (unreachable database, not a key), 2 usage error.`,
  validate: `Usage: agency-sandbox validate FILE

Checks a fixture document against the fixture schema and its cross-references.
Prints its errors grouped by rule (what the field must be, an example, the count and the
first paths), and for a fixture of an earlier format what was converted, one line per field.
Exit 0 when valid (converted or not), 1 when not.`,
  generate: `Usage: agency-sandbox generate [options]

Options:
  --agencies N   number of agencies (default 1)
  --clients M    clients per agency (default 1000)
  --seed S       random seed; the same seed gives the same fixture (default 1)
  --out FILE     where to write the fixture (default: standard output)`,
  import: `Usage: agency-sandbox import --from URL --client-id ID --client-secret SECRET --out FILE [options]

Reads everything the integration sees through the vendor API of a running instance (the live
service, staging, or another sandbox): agencies and scopes, offices, users, every client with
every group granted, and the deleted clients; writes it as a fixture for serve --fixtures.

Options:
  --from URL              the instance, e.g. https://staging.example.com or http://127.0.0.1:8080
  --client-id ID          the integration's Client Id (kept in the fixture)
  --client-secret SECRET  its Client Secret (the fixture gets a new one, printed, unless --keep-secret)
  --out FILE              the fixture to write (FILE.partial and FILE.checkpoint while it runs)
  --version 4.0|3.0       the API version to read with (default 4.0; 3.0 infers the scopes)
  --agencies 1001,1002    only these agencies (default: every agency listed)
  --anonymize             replace names, addresses, e-mails, phones, numbers and notes consistently
  --seed S                the anonymising seed: the same seed maps alike (default: drawn at random)
  --concurrency N         batch reads in flight at once (default 4)
  --resume                carry on an interrupted import from FILE.checkpoint
  --keep-secret           copy --client-secret into the fixture
  --timeout S             seconds per request attempt (default 60); a request, retries and waits
                          included, gives up after S x (N + 1) seconds
  --retries N             retries of a dropped connection, timeout, 429 or 5xx (default 6); a 429 or
                          5xx waits its Retry-After, up to 60 s (a longer one gives up at once)

Every answer is read up to 16 MiB (as received and once decompressed) and its JSON up to 64
levels deep; what the fixture cannot hold (an agency listed twice, a client the fixture schema
refuses) is left out and counted. The fixture written always passes validate.

Exit codes: 0 written, 1 stopped (one line says why; after a give-up, --resume carries on), 2 usage error.`,
  compare: `Usage: agency-sandbox compare --from URL --client-id ID --client-secret S --to URL [options]

Sends the same read-only requests to both instances (agencies, offices, users, changed ids,
a sample of clients in versions 4.0, 3.0 and 1, batch reads, a search, and the error answers
of an unknown client, a forbidden agency and bad credentials) and reports every difference in
status, Content-Type and Denied headers, field presence, field type and value format (date
with or without zone, number or string), grouped by endpoint. Values themselves are not compared.

Options:
  --from URL, --client-id ID, --client-secret S   the reference instance (e.g. staging)
  --to URL                                        the instance checked against it (e.g. the sandbox)
  --to-client-id ID, --to-client-secret S         its credentials (default: the same as --from's)
  --agency N                                      the agency to read (default: the first listed)
  --sample N                                      clients read one by one (default 10)
  --format text|json                              the report's form (default text)
  --timeout S                                     seconds per request attempt (default 60)

Exit codes: 0 no difference, 1 differences found (or an instance cannot be read), 2 usage error.`
}

/** The environment settings for `serve --help`, aligned, with their defaults where they have one. */
function settingsHelp (): string {
  const width = Math.max(...SETTINGS.map((s) => s.env.length)) + 2
  return SETTINGS.map((s) => {
    const fallback = s.default.startsWith('(') ? s.default.slice(1, -1) : `default ${s.default}`
    return `  ${s.env.padEnd(width)}${s.meaning} (${fallback})`
  }).join('\n')
}
