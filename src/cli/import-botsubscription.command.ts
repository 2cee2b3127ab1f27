import type { Container } from '../container.js';
import { isUuid } from '../domain/ids.js';
import { moveIn, type MoveInReport } from '../domain/moving-in/move-in.js';
import { SourceAccessError, SourceUnavailableError } from '../domain/moving-in/source.js';
import { BotSubscriptionApi } from '../moving-in/botsubscription-api.js';
import { MoveInProgressPrinter } from './move-in-progress.js';

/**
 * `npx tenure import botsubscription`: a community's data moved from the hosted product into a
 * tenure project (docs/moving-in.md). The program (program.ts) parses the options and finds the
 * key; this runs the move on the container and says what came over and what did not.
 */

export interface MoveInCommand {
  project: string;
  sourceProject: string;
  baseUrl: string;
  apiKey: string;
  retries: number;
  progress: boolean;
}

export interface MoveInOutput {
  report: Record<string, unknown>;
  /** The last line on stderr: counts, and why the exit code is what it is. */
  summary: string;
  code: number;
}

/** The product's published limit, which the client keeps under. */
const PER_MINUTE = 100;

/** Why the options cannot be used, or null. */
export function optionsProblem(o: { project: string; sourceProject: string; baseUrl: string; retries: string }): string | null {
  if (!isUuid(o.project)) return `--project must be a tenure project id (a UUID), not ${o.project}`;
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(o.sourceProject)) return '--source-project must be the id of the project in the hosted product';
  let url: URL;
  try {
    url = new URL(o.baseUrl);
  } catch {
    return `--base-url must be a URL, not ${o.baseUrl}`;
  }
  // The key travels in every request: in clear text only to this machine (a local copy or fake of the API).
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) return '--base-url must be an https URL (http only for 127.0.0.1 or localhost)';
  if (url.username !== '' || url.password !== '') return '--base-url must not carry credentials';
  const retries = Number(o.retries);
  if (!Number.isInteger(retries) || retries < 0 || retries > 10) return '--retries must be a whole number from 0 to 10';
  return null;
}

export async function runMoveIn(container: Container, c: MoveInCommand, stderr: { write(text: string): unknown; isTTY?: boolean }): Promise<MoveInOutput> {
  const api = new BotSubscriptionApi({ baseUrl: c.baseUrl, sourceProjectId: c.sourceProject, apiKey: c.apiKey, perMinute: PER_MINUTE, retries: c.retries });
  const progress = c.progress
    ? new MoveInProgressPrinter({ sink: stderr, inPlace: stderr.isTTY === true, perMinute: PER_MINUTE, rateLimited: () => api.stats.rateLimited })
    : null;
  const { services, stores, clock } = container;
  let report: MoveInReport;
  try {
    report = await moveIn({ ...services, endedMemberships: stores.membershipImport, clock }, c.project, api, (p) => progress?.update(p));
  } catch (err) {
    progress?.finish();
    if (err instanceof SourceAccessError) throw new MoveInError(`${err.message}. Nothing was written.`);
    if (err instanceof SourceUnavailableError) {
      throw new MoveInError(`${err.message}. What was written so far stays; run the same command again to go on where this stopped.`);
    }
    throw err;
  }
  progress?.finish();
  const failed = report.not_brought_over.length;
  const out = {
    project: c.project,
    source_project: c.sourceProject,
    base_url: c.baseUrl,
    ...report,
    source_requests: api.stats.requests,
    rate_limited: api.stats.rateLimited,
  };
  return { report: out, summary: summary(report), code: failed > 0 ? 2 : 0 };
}

/** An expected failure of the move: one sentence, exit code 1. */
export class MoveInError extends Error {}

function summary(r: MoveInReport): string {
  const kinds = Object.keys(r.brought_over) as (keyof MoveInReport['brought_over'])[];
  const counts = kinds.map((k) => `${r.brought_over[k]} ${k}s`).join(', ');
  const there = kinds.reduce((n, k) => n + r.already_there[k], 0);
  const head = `import botsubscription: brought over ${counts}; ${there} already there`;
  const failed = r.not_brought_over.length;
  return failed > 0
    ? `${head}; ${failed} not brought over (each listed in not_brought_over with its reason); exit code 2`
    : `${head}; everything came over`;
}

/** Reads a secret from a terminal without echoing it. */
export async function promptHidden(question: string, stdin: NodeJS.ReadStream, out: { write(text: string): unknown }): Promise<string> {
  out.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') {
            stdin.off('data', onData);
            out.write('\n');
            resolve(typed);
            return;
          }
          if (ch === '\u0003') {
            stdin.off('data', onData);
            out.write('\n');
            reject(new MoveInError('interrupted'));
            return;
          }
          if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      stdin.on('data', onData);
      stdin.once('end', () => reject(new MoveInError('no key was typed (stdin closed)')));
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
  }
}
