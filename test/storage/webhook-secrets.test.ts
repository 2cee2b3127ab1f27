import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { rowsOf, type StorageOptions } from '../../src/database/db.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from '../../src/webhooks/delivery.worker.js';
import { HttpSender } from '../../src/webhooks/http-sender.js';
import { signatureHeaders } from '../../src/webhooks/signing.js';
import { createTestDatabase, onPostgres, testConfig } from '../support/harness.js';
import { startReceiver, verifyProductSignature, verifyStandardSignature, type Receiver } from '../support/webhook-receiver.js';
import { capturedLogs } from '../support/logs.js';

/**
 * Webhook signing secrets at rest (docs/webhooks.md, "Decisions"), across real starts of one
 * database: a secret stored in plain text the old way is sealed by the next start and signs as
 * before; a new one never reaches the database unsealed; one sealed with a key this instance
 * does not have sends nothing and says why.
 */

const hex = () => randomBytes(32).toString('hex');

describe('webhook signing secrets at rest', () => {
  let storage: StorageOptions;
  let cleanup: () => Promise<void>;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    if (onPostgres) {
      const database = await createTestDatabase();
      storage = database.storage;
      cleanup = database.drop;
    } else {
      // Embedded storage on disk, so that each start opens what the last one left.
      const dir = await mkdtemp(path.join(tmpdir(), 'tenure-webhook-secrets-'));
      await cp(inject('pgliteDataDir'), dir, { recursive: true });
      storage = { kind: 'pglite', dataDir: dir };
      cleanup = () => rm(dir, { recursive: true, force: true });
    }
  });

  afterAll(async () => {
    await receiver?.close();
    await cleanup?.();
  });

  const start = (env: Record<string, string> = {}, logger = createLogger('silent')) =>
    createContainer({ config: testConfig({ TENURE_WEBHOOK_ALLOW_PRIVATE: 'true', ...env }), logger, storage });

  async function withStart<T>(run: (c: Container) => Promise<T>, env: Record<string, string> = {}, logger = createLogger('silent')): Promise<T> {
    const c = await start(env, logger);
    try {
      return await run(c);
    } finally {
      await c.close();
    }
  }

  const row = async (c: Container, id: string) =>
    rowsOf<{ secret: string; previous_secret: string | null; whole: string }>(
      await c.database.db.execute(sql`SELECT secret, previous_secret, w::text AS whole FROM webhooks w WHERE id = ${id}`),
    )[0]!;

  /** A delivery worker wired as the runtime wires it, on `c`. */
  async function withWorker<T>(c: Container, run: (worker: DeliveryWorker) => Promise<T>, logger = c.logger): Promise<T> {
    const sender = new HttpSender();
    const worker = new DeliveryWorker(
      { store: c.stores.deliveries, sender, resolve: c.resolve, clock: c.clock, random: () => 0.5, logger, secrets: c.webhookSecrets },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 4, perEndpoint: 4, leaseMs: 60_000, allowPrivate: true },
    );
    try {
      return await run(worker);
    } finally {
      await worker.stop(0);
      await sender.close();
    }
  }

  /** What a delivery worker logs when it starts. */
  async function workerStartLines(c: Container): Promise<Record<string, unknown>[]> {
    const log = capturedLogs();
    await withWorker(c, async (worker) => worker.start(), log.logger);
    return log.lines;
  }

  /** Sends the project's webhook a test event and runs one worker pass; returns what the receiver got. */
  async function deliverTest(c: Container, projectId: string, webhookId: string) {
    const before = receiver.requests.length;
    const sent = await c.services.webhooks.sendTest(projectId, webhookId);
    expect(sent.ok).toBe(true);
    await withWorker(c, async (worker) => expect(await worker.drain()).toBe(1));
    return receiver.requests.slice(before);
  }

  it('a secret stored in plain text the old way (with a rotated-out one) is sealed by the next start, is nowhere in its row, and signs exactly as before', async () => {
    const current = hex();
    const previous = hex();
    const { projectId, webhookId } = await withStart(async (c) => {
      const project = await c.services.projects.createProject('legacy secrets');
      if (!project.ok) throw project.error;
      const inserted = await c.database.db.execute(sql`
        INSERT INTO webhooks (project_id, url, secret, previous_secret, previous_secret_expires_at)
        VALUES (${project.value.id}, ${`${receiver.url}/legacy`}, ${current}, ${previous}, now() + interval '1 hour') RETURNING id`);
      return { projectId: project.value.id, webhookId: rowsOf<{ id: string }>(inserted)[0]!.id };
    });

    const log = capturedLogs();
    const sealed = await withStart(async (c) => {
      const stored = await row(c, webhookId);
      expect(stored.secret.startsWith('v1.')).toBe(true);
      expect(stored.previous_secret?.startsWith('v1.')).toBe(true);
      expect(stored.whole).not.toContain(current);
      expect(stored.whole).not.toContain(previous);
      expect(c.webhookSecrets.open(stored.secret)).toBe(current);

      const [request] = await deliverTest(c, projectId, webhookId);
      expect(request, 'the receiver got the test event').toBeDefined();
      // Both secrets sign, in both schemes, verified as receivers do…
      for (const secret of [current, previous]) {
        expect(verifyProductSignature(request!, secret)).not.toBeNull();
        expect(verifyStandardSignature(request!, secret)).toMatchObject({ type: 'webhook.test' });
      }
      // …and the headers are byte for byte what the plain secrets give.
      const t = Number(request!.headers['webhook-timestamp']);
      expect({ product: request!.headers['x-webhook-signature'], standard: request!.headers['webhook-signature'] }).toStrictEqual((() => {
        const h = signatureHeaders({ eventId: String(request!.headers['webhook-id']), timestamp: t, body: request!.body, secrets: [current, previous] });
        return { product: h['x-webhook-signature'], standard: h['webhook-signature'] };
      })());
      // The worker says what the start did; the start itself says nothing (a CLI's stdout is its output).
      expect((await workerStartLines(c)).map((l) => [l.level, l.webhooks, l.msg])).toStrictEqual([[30, 1, 'the start sealed the webhook signing secrets stored unsealed']]);
      return stored;
    }, {}, log.logger);
    expect(log.lines.filter((l) => String(l.msg).includes('secret'))).toStrictEqual([]);

    // A third start finds nothing to seal and changes nothing.
    await withStart(async (c) => {
      const stored = await row(c, webhookId);
      expect({ secret: stored.secret, previous_secret: stored.previous_secret }).toStrictEqual({ secret: sealed.secret, previous_secret: sealed.previous_secret });
      expect(await workerStartLines(c)).toStrictEqual([]);
    });
  });

  it('a secret made or rotated through the service is shown once and never stored unsealed (on embedded storage: in no file of DATA_DIR, WAL included)', async () => {
    const shown: string[] = [];
    await withStart(async (c) => {
      const project = await c.services.projects.createProject('new secrets');
      if (!project.ok) throw project.error;
      const created = await c.services.webhooks.create(project.value.id, `${receiver.url}/new`);
      if (!created.ok) throw created.error;
      expect(created.value.secret).toMatch(/^[0-9a-f]{64}$/);
      const rotated = await c.services.webhooks.rotateSecret(project.value.id, created.value.id);
      if (!rotated.ok) throw rotated.error;
      shown.push(created.value.secret, rotated.value.secret);
      const stored = await row(c, created.value.id);
      for (const secret of shown) expect(stored.whole).not.toContain(secret);
      expect([c.webhookSecrets.open(stored.secret), c.webhookSecrets.open(stored.previous_secret!)]).toStrictEqual([rotated.value.secret, created.value.secret]);
      await c.database.db.execute(sql`CHECKPOINT`);
    });
    if (storage.kind !== 'pglite') return;
    const files: string[] = [];
    const walk = async (p: string): Promise<void> => {
      if ((await stat(p)).isDirectory()) for (const name of await readdir(p)) await walk(path.join(p, name));
      else files.push(p);
    };
    await walk(storage.dataDir);
    for (const file of files) {
      const bytes = await readFile(file);
      for (const secret of shown) expect(bytes.includes(secret), `${secret} in ${file}`).toBe(false);
    }
  });

  it('a secret sealed with a key this instance does not have: a worker says so when it starts, naming the variable, and an attempt sends nothing and is logged as signing, retried', async () => {
    const { projectId, webhookId } = await withStart(async (c) => {
      const project = await c.services.projects.createProject('other key');
      if (!project.ok) throw project.error;
      const created = await c.services.webhooks.create(project.value.id, `${receiver.url}/other-key`);
      if (!created.ok) throw created.error;
      return { projectId: project.value.id, webhookId: created.value.id };
    });
    await withStart(
      async (c) => {
        const said = await workerStartLines(c);
        expect(said.filter((l) => l.level === 50 && l.variable === 'TENURE_ENCRYPTION_KEY')).toMatchObject([{ webhooks: expect.any(Number) as number }]);
        const requests = await deliverTest(c, projectId, webhookId);
        expect(requests).toStrictEqual([]);
        const attempts = rowsOf<{ error_class: string; error_message: string; outcome: string }>(
          await c.database.db.execute(sql`
            SELECT a.error_class, a.error_message, a.outcome FROM webhook_delivery_attempts a
            JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = ${webhookId}`),
        );
        expect(attempts).toMatchObject([{ error_class: 'signing', outcome: 'retry' }]);
        expect(attempts[0]!.error_message).toMatch(/could not open this webhook's signing secret/);
      },
      { TENURE_ENCRYPTION_KEY: randomBytes(32).toString('base64') },
    );
  });

  // Embedded storage always has a key (generated in DATA_DIR), so this case exists on PostgreSQL only.
  if (onPostgres) it('PostgreSQL without a key: webhooks work with their secrets stored as they are, each worker warns at its start naming the variable, and the first start with a key seals them', async () => {
    const { projectId, webhookId, secret } = await withStart(
      async (c) => {
        expect(c.webhookSecrets.sealing).toBe(false);
        expect((await workerStartLines(c)).filter((l) => l.level === 40 && l.variable === 'TENURE_ENCRYPTION_KEY')).toHaveLength(1);
        const project = await c.services.projects.createProject('keyless');
        if (!project.ok) throw project.error;
        const created = await c.services.webhooks.create(project.value.id, `${receiver.url}/keyless`);
        if (!created.ok) throw created.error;
        expect((await row(c, created.value.id)).secret).toBe(created.value.secret);
        return { projectId: project.value.id, webhookId: created.value.id, secret: created.value.secret };
      },
      { TENURE_ENCRYPTION_KEY: '' },
    );
    await withStart(async (c) => {
      const stored = await row(c, webhookId);
      expect(stored.whole).not.toContain(secret);
      const [request] = await deliverTest(c, projectId, webhookId);
      expect(verifyStandardSignature(request!, secret)).toMatchObject({ type: 'webhook.test' });
    });
  });
});
