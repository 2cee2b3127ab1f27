import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cliTenant, seedDataDir } from '../ops/ops-support.js';
import { createTestDatabase, onPostgres } from '../support/harness.js';
import { freePort, productNode } from '../support/processes.js';
import { eventually } from '../support/webhook-harness.js';
import { startReceiver, verifyProductSignature, type ReceivedRequest } from '../support/webhook-receiver.js';

/**
 * At least once across crashes, with real processes (the built server, as `npm start` runs it):
 * a server sends towards a receiver that stalls, is killed with SIGKILL mid-attempt, and a new
 * server started on the same storage delivers every event — the ones the dead process had
 * claimed once their lease runs out. On PostgreSQL in a database of its own (a worker serves
 * every project of its database); on embedded storage the restarted server also waits out the
 * dead one's data-directory lock, and finds the leases in the recovered database files. The waits
 * are the production ones, made short through configuration: a 6 s lease (4 s attempts) instead
 * of 60 s, and a lock that goes stale after 5 s instead of 10 s.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const EVENTS = 12;
const STALLED = 4; // TENURE_WEBHOOK_ENDPOINT_CONCURRENCY below: what the first server holds when killed

describe.concurrent(`at-least-once delivery across a crash (${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  const children = new Set<ChildProcess>();
  const stderrOf = new Map<ChildProcess, string>();
  const cleanups: (() => Promise<void>)[] = [];

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /**
   * Storage, a port and a webhook receiver of the test's own (so the two tests run side by side),
   * and a project with a key made by the CLI before any server starts.
   */
  async function site() {
    const dir = await mkdtemp(path.join(tmpdir(), 'tenure-crash-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const { DATABASE_URL: _admin, ...rest } = process.env;
    const env: NodeJS.ProcessEnv = {
      ...rest,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: path.join(dir, 'data'),
      LOG_LEVEL: 'warn',
      TENURE_DEMO_PROJECT: 'false',
      TENURE_WEBHOOK_ALLOW_PRIVATE: 'true',
      TENURE_WEBHOOK_TIMEOUT_SECONDS: '4',
      TENURE_WEBHOOK_LEASE_SECONDS: '6',
      TENURE_DATA_DIR_LOCK_STALE_SECONDS: '5',
      TENURE_WEBHOOK_ENDPOINT_CONCURRENCY: String(STALLED),
    };
    if (onPostgres) {
      const database = await createTestDatabase();
      cleanups.push(database.drop);
      if (database.storage.kind === 'postgres') env.DATABASE_URL = database.storage.url;
    } else {
      // A migrated embedded database, copied: the first command does not pay for creating one.
      await seedDataDir(env.DATA_DIR!);
    }
    const tenant = await cliTenant(env);
    const project = { id: tenant.projectId, key: tenant.key };
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());

    /** Starts `node <file> <args>` with this site's environment; its stderr is kept for failure messages. */
    async function start(file: string, args: string[] = [], extra: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
      const child = spawn(process.execPath, productNode([file, ...args]), { env: { ...env, ...extra }, stdio: ['ignore', 'ignore', 'pipe'] });
      stderrOf.set(child, '');
      child.stderr!.on('data', (c: Buffer) => stderrOf.set(child, stderrOf.get(child) + c.toString()));
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    }

    async function serverUp(child: ChildProcess): Promise<void> {
      await eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderrOf.get(child)}`);
          return fetch(`${base}/v2/health-probe`).then(
            () => true,
            () => false,
          );
        },
        'the server listens',
        60_000,
      );
    }

    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${base}/v2/projects/${project.id}${url}`, {
        method,
        headers: { authorization: `Bearer ${project.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as { data: unknown };
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };

    return { receiver, start, serverUp, api };
  }

  async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  const idsOf = (requests: ReceivedRequest[]) => new Set(requests.map((r) => r.headers['webhook-id'] as string));

  it('loses nothing when the server is killed with SIGKILL mid-delivery', { timeout: 180_000 }, async () => {
    const { receiver, start, serverUp, api } = await site();
    receiver.respond(() => 'stall');
    const first = await start(MAIN);
    await serverUp(first);
    const hook = (await api('POST', '/integrations/webhooks', { url: `${receiver.url}/crash` })) as { id: string; secret: string };
    for (let i = 0; i < EVENTS; i++) {
      await api('POST', '/memberships', { user_id: String(100_000_000_000_000_000n + BigInt(i)), end_date: '2099-01-01T00:00:00.000Z' });
    }
    // The first server has claimed and is sending some: they hang at the receiver.
    await receiver.waitFor(STALLED, 30_000);
    await stop(first, 'SIGKILL');
    const inFlightWhenKilled = idsOf(receiver.requests);
    expect(inFlightWhenKilled.size).toBe(STALLED);

    receiver.respond(() => ({ status: 200 }));
    const killedAt = receiver.requests.length;
    const second = await start(MAIN);
    try {
      // Every event arrives after the crash, the dead server's claims once their 6 s lease has run out.
      const all = await receiver.waitUntil((r) => idsOf(r.slice(killedAt)).size === EVENTS, 120_000);
      await serverUp(second);

      const byId = new Map<string, ReceivedRequest[]>();
      for (const r of all) byId.set(r.headers['webhook-id'] as string, [...(byId.get(r.headers['webhook-id'] as string) ?? []), r]);
      expect(byId.size).toBe(EVENTS);
      for (const id of inFlightWhenKilled) {
        const sent = byId.get(id)!;
        // Sent again after the crash: attempt 2, the same bytes, a valid signature.
        expect(sent.map((r) => r.headers['x-webhook-attempt'])).toStrictEqual(['1', '2']);
        expect(sent[1]!.body).toBe(sent[0]!.body);
        expect(verifyProductSignature(sent[1]!, hook.secret)).not.toBeNull();
      }
      // The delivery log agrees: every delivery delivered.
      await eventually(async () => {
        const log = (await api('GET', `/integrations/webhooks/${hook.id}/deliveries?limit=100&status=delivered`)) as unknown[];
        return log.length === EVENTS;
      }, 'all deliveries recorded as delivered', 30_000);
    } finally {
      await stop(second, 'SIGTERM');
    }
    expect(second.exitCode).toBe(0);
  });

  it('delivers with `npx tenure worker` alone (API nodes with TENURE_WORKER=false)', { timeout: 120_000 }, async () => {
    const { receiver, start, serverUp, api } = await site();
    const apiOnly = await start(MAIN, [], { TENURE_WORKER: 'false' });
    let worker: ChildProcess | null = null;
    try {
      await serverUp(apiOnly);
      await api('POST', '/integrations/webhooks', { url: `${receiver.url}/worker` });
      await api('POST', '/memberships', { user_id: '999999999999999999', end_date: '2099-01-01T00:00:00.000Z' });
      // Embedded storage is one process at a time: stop the API server before the worker opens it.
      if (!onPostgres) await stop(apiOnly, 'SIGTERM');
      worker = await start(BIN, ['worker']);
      const got = await receiver.waitUntil((r) => r.some((x) => x.path === '/worker'), 60_000);
      expect(got.filter((x) => x.path === '/worker').map((x) => x.headers['x-webhook-event'])).toStrictEqual(['membership.created']);
      await stop(worker, 'SIGTERM');
      expect(worker.exitCode).toBe(0);
    } finally {
      if (worker) await stop(worker, 'SIGKILL');
      await stop(apiOnly, 'SIGTERM');
    }
  });
});
