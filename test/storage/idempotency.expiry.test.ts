import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RETENTION_MS, RUNNING_LEASE_MS } from '../../src/http/idempotency.js';
import { webhookRows } from '../support/api.js';
import { createHarness, type Harness } from '../support/harness.js';
import { expectExecuted, expectReplayWithoutSecret, keyRows, memberPayload, newKey, post } from '../support/idempotency.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * Retention (docs/idempotency-and-lists.md): a record is kept 24 hours; past that it counts as
 * absent (the next request with the key runs and takes it over) and the periodic prune deletes it.
 * A claim whose request never finished frees its key when its lease runs out.
 */
describe('Idempotency-Key: expiry', () => {
  let h: Harness;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(new Date());
    h = await createHarness({ clock });
  });
  afterAll(() => h.close());

  const hook = { url: 'https://hooks.example.com/expiry' };

  it('replays until 24 hours have passed, then runs the request again as new', async () => {
    const t = await h.tenant();
    const url = `${t.base}/integrations/webhooks`;
    const key = newKey();
    const first = await post(t, url, hook, key);
    expectExecuted(first, 200);

    clock.advance(RETENTION_MS - 1_000);
    expectReplayWithoutSecret(await post(t, url, hook, key), first);

    clock.advance(2_000);
    const fresh = await post(t, url, hook, key);
    expectExecuted(fresh, 200, first);
    expect(fresh.json().data.id).not.toBe(first.json().data.id);
    expect(await webhookRows(h, t.projectId)).toHaveLength(2);
    // The key now holds the new response, for another 24 hours.
    expectReplayWithoutSecret(await post(t, url, hook, key), fresh);
  });

  it('after expiry the key may be used for a different request', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    expectExecuted(await post(t, url, memberPayload(), key), 201);
    expect((await post(t, url, memberPayload(), key)).statusCode).toBe(422);
    clock.advance(RETENTION_MS + 1);
    expectExecuted(await post(t, url, memberPayload(), key), 201);
  });

  it('a claim left running (its node died) blocks the key with 409 until its lease ends', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const first = await post(t, url, payload, key);
    expectExecuted(first, 201);
    // What a crash between claim and response leaves behind: the record back in `running`.
    await h.database.db.execute(sql`
      UPDATE idempotency_keys SET state = 'running', response_status = NULL, response_body = NULL,
        expires_at = ${new Date(clock.now().getTime() + RUNNING_LEASE_MS)}
      WHERE project_id = ${t.projectId} AND key = ${key}`);
    expect((await post(t, url, payload, key)).statusCode).toBe(409);
    clock.advance(RUNNING_LEASE_MS + 1);
    // The lease is over: the request runs again (and meets the membership the first one made).
    const retried = await post(t, url, payload, key);
    expectExecuted(retried, 409, first);
    expect(retried.json().error.error_code).toBe('CONFLICT');
    expect(retried.json().error.message).toMatch(/already has a membership/);
  });

  it('prunes expired records from the table (by the database clock), keeping live ones', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const live = newKey();
    expectExecuted(await post(t, url, memberPayload(), live), 201);
    await h.database.db.execute(sql`
      INSERT INTO idempotency_keys (project_id, key, request_hash, state, response_status, response_body, expires_at)
      VALUES (${t.projectId}, 'stale', 'x', 'done', 201, '{}', now() - interval '1 minute')`);
    // Past the prune interval: the next keyed request prunes in the background.
    clock.advance(60 * 60_000);
    const next = newKey();
    expectExecuted(await post(t, url, memberPayload(), next), 201);
    await vi.waitFor(async () => expect((await keyRows(h, t.projectId)).map((r) => r.key).sort()).toStrictEqual([live, next].sort()));
  });
});
