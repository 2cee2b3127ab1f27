/**
 * The examples and notes `npx tenure --help` and `npx tenure <command> --help` print after
 * commander's own usage lines. Kept apart from the commands so the program reads as a list.
 */

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

export const PROGRAM_HELP = `
Every command prints one JSON document on stdout (doctor also prints its findings as a report for
people on stderr). Errors are one sentence on stderr and a non-zero exit code.

Storage: embedded PGlite in DATA_DIR (default ./data) unless DATABASE_URL is set. Embedded storage
is one process at a time: stop the server before running other commands against the same DATA_DIR.
${examples(
  'npx tenure doctor',
  'npx tenure project create --name "Acme"',
  'npx tenure key create --project <project-id> --label ci',
  'npx tenure membership import --project <project-id> --file members.csv',
  'DATABASE_URL=postgres://tenure@db/tenure npx tenure serve',
)}
Run "npx tenure <command> --help" for a command's options. Configuration and operations:
docs/configuration.md and docs/operations.md.
`;

export const COMMAND_HELP = {
  projectCreate: examples('npx tenure project create --name "Acme"'),
  keyCreate: `
The key is printed once, in "key"; tenure keeps only its hash. Send it as "Authorization: Bearer <key>".
It is a full key, made even when the project has TENURE_MAX_KEYS_PER_PROJECT active keys: the way
back into a project whose keys leaked (revoke them with it through the API).
${examples('npx tenure key create --project 6f1c0d2e-0000-4000-8000-000000000000 --label "billing backend"')}`,
  migrate: `
The server also applies pending migrations when it starts; several nodes starting at once take
turns (a PostgreSQL advisory lock).
${examples('npx tenure migrate', 'DATABASE_URL=postgres://tenure@db/tenure npx tenure migrate')}`,
  serve: `
Listens on HOST:PORT (default 127.0.0.1:3000) until SIGTERM or SIGINT, then drains requests and
webhook attempts in flight for up to TENURE_SHUTDOWN_TIMEOUT_MS before exiting 0.
${examples('npx tenure serve', 'PORT=8080 HOST=0.0.0.0 TENURE_WORKER=false npx tenure serve')}`,
  worker: `
For dedicated worker nodes: run the API nodes with TENURE_WORKER=false then. With
TENURE_WORKER_METRICS_PORT set it serves GET /metrics (its delivery attempts by outcome and
process metrics) on HOST at that port.
${examples('DATABASE_URL=postgres://tenure@db/tenure npx tenure worker', 'HOST=0.0.0.0 TENURE_WORKER_METRICS_PORT=9464 npx tenure worker')}`,
  membershipImport: `
The CSV holds user_id,end_date rows, one a line (an optional header line names the columns in
any order, a UTF-8 BOM allowed). Optional columns: plan_id puts members on a plan, user_name
records the member's name, start_date says when the membership began (not after end_date).
end_date and start_date are a 13-digit Unix timestamp in milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ.
Every data row is inserted or rejected with its line number and reason;
a line that is not readable CSV (an unclosed quote) is rejected alone and the import goes on.
Exit 0 when every row was inserted, 2 when any was rejected, 1 on an error; the last line on
stderr says which. --dry-run checks the file against the database and keeps nothing; --rejects
writes the rejected rows (line, reason, the row as it was) to a CSV file. Progress (rows/s,
percentage, ETA) goes to stderr when stderr is a terminal, or always with --progress; the JSON
report alone goes to stdout.
${examples(
  'npx tenure membership import --project <project-id> --file members.csv --dry-run',
  'npx tenure membership import --project <project-id> --file members.csv --rejects rejected.csv',
  'npx tenure membership import --project <project-id> --file members.csv --progress 2> progress.log > report.json',
)}`,
  importBotsubscription: `
Reads the project's settings, targets, plans, memberships and users (with their bans) from
BotSubscription's v2 API and writes them into the tenure project through the same services as
the API, events included. The key is read from BOTSUBSCRIPTION_API_KEY, or asked for (not shown)
when that is unset and the command runs in a terminal; it is never a flag. Requests keep under
the product's limits (100 a minute, 20 a second) and wait out every 429 for its Retry-After.
Running it again changes nothing; an interrupted run goes on where it stopped. The JSON report
on stdout lists what came over, what was already there, and each thing that could not come over
with its reason. Exit 0 when everything came over, 2 when anything could not, 1 on an error
(a refused key writes nothing). docs/moving-in.md says what moves and what does not.
${examples(
  'BOTSUBSCRIPTION_API_KEY=... npx tenure import botsubscription --project <project-id> --source-project <botsubscription-project-id>',
  'npx tenure import botsubscription --project <project-id> --source-project <id> > move-report.json',
)}`,
  doctor: `
Checks, in order: the configuration (every variable parsed as the server would), the database
(reachable; on embedded storage, whether another process holds DATA_DIR), migrations (applied or
pending), and Redis when REDIS_URL is set. Each failing check says how to fix it; the exit code
is 1 when any check failed. It changes nothing. The findings are one JSON document on stdout and
a report for people on stderr.
${examples('npx tenure doctor', 'DATABASE_URL=postgres://tenure@db/tenure REDIS_URL=redis://cache:6379 npx tenure doctor')}`,
} as const;
