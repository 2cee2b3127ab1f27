import { createReadStream } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { botSubscriptionApiKey, ConfigError, loadConfig, type Config } from '../config.js';
import type { Container } from '../container.js';
import { AppError, type Result } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { DEFAULT_BATCH, EMBEDDED_BATCH, ImportFormatError, importMemberships, type ImportReport } from '../domain/memberships/membership-import.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { addAdminCommand } from './admin-link.command.js';
import { COMMAND_HELP, PROGRAM_HELP } from './help.js';
import { ImportProgress } from './import-progress.js';
import { TENURE_VERSION } from '../version.js';

/**
 * The operator CLI (`npx tenure <command>`), as a function: `runCli(argv, io)` runs one command
 * and returns its exit code, so the commands' behaviour is tested in-process; `main.ts` (the bin)
 * runs it on the process's argv, environment and streams. Output is one JSON document on
 * stdout; errors are a plain sentence on stderr and a non-zero exit. With embedded storage the CLI
 * opens the same DATA_DIR as the server; PGlite allows one process at a time, so if a server holds
 * it the CLI says so at once instead of waiting.
 */

/** Where the CLI writes: the process's streams, or a test's collector. */
export interface CliWriter {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  hasColors?(): boolean;
}

/** A container for one command, and how to let it go when the command is done. */
export interface OpenedContainer {
  container: Container;
  release(): Promise<void>;
}

export interface CliIo {
  /** The environment the configuration is read from (default: the process's, read by src/config.ts). */
  env?: NodeJS.ProcessEnv;
  stdout?: CliWriter;
  stderr?: CliWriter;
  /**
   * Opens the container a command runs on (default: the configuration's storage, opened and
   * migrated, the embedded data directory never waited for, closed after the command). Tests lend
   * their harness's open container and release nothing.
   */
  openContainer?: (config: Config) => Promise<OpenedContainer>;
}

class CliError extends Error {}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new CliError(result.error.message);
  return result.value;
}

async function openOwnContainer(config: Config): Promise<OpenedContainer> {
  // Storage and its drivers load only for the commands that use them, so `--help` answers at once.
  const [{ createContainer }, { createLogger }] = await Promise.all([import('../container.js'), import('../logger.js')]);
  const container = await createContainer({ config, logger: createLogger(config.log.level), open: { lockWaitMs: 0 } });
  return { container, release: () => container.close() };
}

/** Commander's output, sent to `io`'s writers; colours only on a writer that is a colour terminal. */
function outputOf(stdout: CliWriter, stderr: CliWriter, ownStreams: boolean): OutputConfiguration {
  const write = { writeOut: (s: string) => void stdout.write(s), writeErr: (s: string) => void stderr.write(s) };
  if (ownStreams) return write;
  // Off a terminal, commander's own width (80 columns).
  const width = (w: CliWriter) => (w.isTTY === true && w.columns ? w.columns : 80);
  const colours = (w: CliWriter) => w.isTTY === true && w.hasColors?.() === true;
  return { ...write, getOutHelpWidth: () => width(stdout), getErrHelpWidth: () => width(stderr), getOutHasColors: () => colours(stdout), getErrHasColors: () => colours(stderr) };
}

function buildProgram(io: Pick<CliIo, 'env'> & Required<Pick<CliIo, 'stdout' | 'stderr' | 'openContainer'>>, ownStreams: boolean, exit: { code: number }): Command {
  const { env, stdout, stderr } = io;
  const print = (value: unknown) => stdout.write(JSON.stringify(value, null, 2) + '\n');

  /** Runs one command on a container, released whatever happens. */
  async function withContainer<T>(fn: (container: Container) => Promise<T>): Promise<T> {
    const opened = await io.openContainer(loadConfig(env));
    try {
      return await fn(opened.container);
    } finally {
      await opened.release();
    }
  }

  const program = new Command('tenure')
    .description('Operate a tenure membership service: projects, keys, migrations, imports, the server.')
    .version(TENURE_VERSION, '-V, --version', 'Print the version of tenure')
    .exitOverride()
    .configureOutput(outputOf(stdout, stderr, ownStreams))
    .showHelpAfterError('(run "npx tenure --help" for the commands, "npx tenure <command> --help" for one)')
    .addHelpText('after', PROGRAM_HELP);

  const project = program.command('project').description('Manage projects');
  project
    .command('create')
    .description('Create a project; prints {id, name, created_at}')
    .requiredOption('--name <name>', 'the project name')
    .addHelpText('after', COMMAND_HELP.projectCreate)
    .action(async (opts: { name: string }) => {
      print(await withContainer(async ({ services }) => unwrap(await services.projects.createProject(opts.name))));
    });

  const key = program.command('key').description('Manage API keys');
  key
    .command('create')
    .description('Create an API key for a project; prints {key, metadata} (the key is shown only here)')
    .requiredOption('--project <id>', 'the project id')
    .option('--label <label>', 'a label to recognise the key by')
    .addHelpText('after', COMMAND_HELP.keyCreate)
    .action(async (opts: { project: string; label?: string }) => {
      print(await withContainer(async ({ services }) => unwrap(await services.projects.createKey(opts.project, opts.label ?? null, 'cli'))));
    });

  addAdminCommand(program, { withContainer, print, stderr });

  program
    .command('migrate')
    .description('Apply pending database migrations')
    .addHelpText('after', COMMAND_HELP.migrate)
    .action(async () => {
      print(await withContainer(async ({ database }) => ({ migrated: await database.migrationsApplied(), storage: database.kind })));
    });

  program
    .command('serve')
    .description('Start the HTTP server (what `npm start` runs)')
    .addHelpText('after', COMMAND_HELP.serve)
    .action(async () => {
      // The server (Fastify, Socket.IO, the worker) loads only for the commands that run it: the
      // others start in half the time. It is a process of its own: it reads process.env and owns
      // the process's streams and signals.
      const { serve } = await import('../server.js');
      await serve();
    });

  program
    .command('worker')
    .description('Run the webhook delivery worker and the expiry sweeper alone, until SIGTERM or SIGINT')
    .addHelpText('after', COMMAND_HELP.worker)
    .action(async () => {
      const { http, ops } = loadConfig(env);
      const [{ startWorkerMetricsServer }, { runWorker }] = await Promise.all([
        import('../observability/worker-metrics.server.js'),
        import('./worker.command.js'),
      ]);
      const metrics = ops.workerMetricsPort
        ? await startWorkerMetricsServer({ host: http.host, port: ops.workerMetricsPort, token: ops.metricsToken })
        : null;
      if (metrics) stderr.write(`tenure: worker metrics at ${metrics.url}\n`);
      try {
        await runWorker(env);
      } finally {
        await metrics?.close();
      }
    });

  const membership = program.command('membership').description('Manage memberships');
  membership
    .command('import')
    .description('Import user_id,end_date rows from a CSV file; prints what was inserted and each rejected line; exits 2 when a row was rejected')
    .requiredOption('--project <id>', 'the project id')
    .requiredOption('--file <path>', 'the CSV file (an optional header names its columns: user_id, end_date, plan_id, user_name, start_date)')
    .option('--batch-size <n>', `rows per chunk (one transaction: COPY, then one insert statement); default ${DEFAULT_BATCH} on PostgreSQL, ${EMBEDDED_BATCH} on embedded storage`)
    .option('--dry-run', 'check the file against the database and report, keeping nothing')
    .option('--rejects <path>', 'write the rejected rows to this CSV file: line, reason and the row as it was')
    .option('--progress', 'print progress on stderr even when it is not a terminal')
    .option('--no-progress', 'print no progress, even on a terminal')
    .addHelpText('after', COMMAND_HELP.membershipImport)
    .action(async (opts: { project: string; file: string; batchSize?: string; dryRun?: boolean; rejects?: string; progress?: boolean }) => {
      const batchSize = opts.batchSize === undefined ? undefined : Number(opts.batchSize);
      if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 50_000)) {
        throw new CliError('--batch-size must be a whole number from 1 to 50000');
      }
      await access(opts.file).catch(() => {
        throw new CliError(`Cannot read ${opts.file}`);
      });
      const report = await withContainer(async ({ services, stores, clock }) => {
        if (!isUuid(opts.project) || (await services.projects.get(opts.project)) === null) {
          throw new CliError(`Project not found: ${opts.project}`);
        }
        const input = createReadStream(opts.file);
        const show = opts.progress ?? stderr.isTTY === true;
        const progress = show
          ? new ImportProgress({
              totalBytes: (await stat(opts.file)).size,
              bytesRead: () => input.bytesRead,
              sink: stderr,
              inPlace: stderr.isTTY === true,
            })
          : null;
        const done = await importMemberships({ chunks: stores.membershipImport, clock }, opts.project, input, {
          batchSize,
          dryRun: opts.dryRun === true,
          onProgress: (rows, inserted) => progress?.update(rows, inserted),
        }).catch((err: unknown) => {
          if (err instanceof ImportFormatError) throw new CliError(`${opts.file}: ${err.message}`);
          throw err;
        });
        progress?.finish(done.rows, done.inserted, done.rejected);
        return done;
      });
      if (opts.rejects !== undefined) await writeFile(opts.rejects, rejectsCsv(report));
      print(report);
      stderr.write(`${importSummary(report)}\n`);
      if (report.rejected > 0) exit.code = 2;
    });

  const importFrom = program.command('import').description('Move a community in from another product');
  importFrom
    .command('botsubscription')
    .description("Bring a project's settings, targets, plans, memberships, users and bans over from BotSubscription's v2 API; exits 2 when anything could not be")
    .requiredOption('--project <id>', 'the tenure project to write into')
    .requiredOption('--source-project <id>', 'the project id in BotSubscription')
    .option('--base-url <url>', "the v2 API's address", 'https://api.botsubscription.com')
    .option('--retries <n>', 'times a failed request (network, 5xx) is sent again, a doubling wait apart from 1 s', '5')
    .option('--no-progress', 'print no progress on stderr')
    .addHelpText('after', COMMAND_HELP.importBotsubscription)
    .action(async (opts: { project: string; sourceProject: string; baseUrl: string; retries: string; progress: boolean }) => {
      const { optionsProblem, promptHidden, runMoveIn, MoveInError } = await import('./import-botsubscription.command.js');
      const problem = optionsProblem(opts);
      if (problem) throw new CliError(problem);
      // Never a flag: a key on the command line lands in shell history and process lists.
      let apiKey = botSubscriptionApiKey(env);
      if (apiKey === null && ownStreams && process.stdin.isTTY) {
        apiKey = (await promptHidden('BotSubscription API key (not shown): ', process.stdin, stderr)).trim() || null;
      }
      if (apiKey === null) throw new CliError('Set BOTSUBSCRIPTION_API_KEY to the BotSubscription API key (or run in a terminal to be asked for it)');
      const out = await withContainer(async (container) => {
        if ((await container.services.projects.get(opts.project)) === null) throw new CliError(`Project not found: ${opts.project}`);
        const command = { ...opts, apiKey: apiKey!, retries: Number(opts.retries) };
        return runMoveIn(container, command, stderr).catch((err: unknown) => {
          throw err instanceof MoveInError ? new CliError(err.message) : err;
        });
      });
      print(out.report);
      stderr.write(`${out.summary}\n`);
      exit.code = out.code;
    });

  program
    .command('doctor')
    .description('Check configuration, database, migrations and Redis; say what is wrong and how to fix it')
    .addHelpText('after', COMMAND_HELP.doctor)
    .action(async () => {
      const { diagnose, formatFindings } = await import('./doctor.command.js');
      const findings = await diagnose(env);
      const ok = findings.every((f) => f.status !== 'fail');
      // Like every command: one JSON document on stdout. The same findings, as a report for people, on stderr.
      stderr.write(formatFindings(findings));
      print({ ok, checks: findings });
      if (!ok) exit.code = 1;
    });

  return program;
}

/** A CSV field, quoted when it must be. */
const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** The rejected rows as CSV: the line number, the reason and the row as it was in the file. */
function rejectsCsv(report: ImportReport): string {
  return ['line,reason,row', ...report.rejections.map((r) => [String(r.line), r.reason, r.text].map(csvField).join(','))].join('\n') + '\n';
}

/** The import's last line on stderr: what happened to every data row, and why the exit code is what it is. */
function importSummary(report: ImportReport): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const what = report.dry_run ? 'would be inserted (dry run: nothing was written)' : 'inserted';
  const head = `import: ${n(report.rows)} data rows: ${n(report.inserted)} ${what}, ${n(report.rejected)} rejected`;
  return report.rejected > 0 ? `${head}; exit code 2: rows were rejected (each listed with its line and reason)` : `${head}; every row ${report.dry_run ? 'would be' : 'was'} imported`;
}

/** Runs one command (`argv` as `process.argv`: node, script, then the arguments); resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const ownStreams = io.stdout === undefined && io.stderr === undefined;
  const exit = { code: 0 };
  const program = buildProgram({ env: io.env, stdout, stderr, openContainer: io.openContainer ?? openOwnContainer }, ownStreams, exit);
  try {
    await program.parseAsync([...argv]);
    return exit.code;
  } catch (err) {
    // Help and version exit 0; usage errors were already printed by commander.
    if (err instanceof CommanderError) return err.exitCode;
    const message =
      err instanceof CliError || err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof AppError
        ? err.message
        : `unexpected error: ${(err as Error).message}`;
    stderr.write(`tenure: ${message}\n`);
    return 1;
  }
}
