/**
 * The background jobs of a worker process (src/worker-runtime.ts) implement one small interface
 * and are registered in one list, in the order they start. The list is checked against the names
 * the process must run before anything starts: a job left out of it, or two under one name, stop
 * the start with an error naming them, instead of a process quietly running without its sweeper.
 */

export interface BackgroundJob {
  readonly name: string;
  /** Starts the job's loop and returns at once. */
  start(): void;
  /** Resolves once nothing of the job runs any more (work in flight finished, or handed back). */
  stop(): Promise<void>;
}

/** A job of the list: what it runs (null when it is off in this process) and when it stops. */
export interface JobEntry<N extends string = string, T = unknown> extends BackgroundJob {
  readonly name: N;
  readonly runs: T;
  /** Stages stop one after the other, from 0; the jobs of one stage stop together. */
  readonly stopStage: number;
}

export interface JobOptions {
  /** Default 0, the first. */
  stopStage?: number;
  /** How to stop it, when not its own `stop()` (a grace for work in flight, say). */
  stop?: () => Promise<void>;
}

/**
 * `runs` as a job of the list under `name`; null registers the job as off here (embedded
 * storage's vacuumer on PostgreSQL, the access workers without a secret box): listed, so it is
 * not missing, but it neither starts nor stops anything.
 */
export function job<N extends string, T extends Pick<BackgroundJob, 'start' | 'stop'> | null>(name: N, runs: T, o: JobOptions = {}): JobEntry<N, T> {
  return {
    name,
    runs,
    stopStage: o.stopStage ?? 0,
    start: () => runs?.start(),
    stop: async () => {
      if (runs) await (o.stop ?? (() => runs.stop()))();
    },
  };
}

/** The jobs by name: what each runs, as the list's types say. */
export type JobsByName<L extends readonly JobEntry[]> = { readonly [J in L[number] as J['name']]: J['runs'] };

/** Throws unless every name of `expected` is in `jobs` exactly once, and nothing else is. */
export function checkJobs(expected: readonly string[], jobs: readonly BackgroundJob[]): void {
  const seen = new Set<string>();
  for (const { name } of jobs) {
    if (seen.has(name)) throw new Error(`background job "${name}" is registered twice`);
    if (!expected.includes(name)) throw new Error(`background job "${name}" is registered but not one of the jobs a worker runs (${expected.join(', ')})`);
    seen.add(name);
  }
  const missing = expected.filter((name) => !seen.has(name));
  if (missing.length > 0) throw new Error(`background jobs not registered: ${missing.join(', ')} (register each, null where it is off)`);
}

/** Starts the jobs in the list's order. */
export function startJobs(jobs: readonly BackgroundJob[]): void {
  for (const j of jobs) j.start();
}

/** Stops the jobs stage by stage (stopStage), the jobs of one stage together. */
export async function stopJobs(jobs: readonly JobEntry[]): Promise<void> {
  const stages = [...new Set(jobs.map((j) => j.stopStage))].sort((a, b) => a - b);
  for (const stage of stages) await Promise.all(jobs.filter((j) => j.stopStage === stage).map((j) => j.stop()));
}
