import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMembership, eventRows, failEventInserts, webhookRows } from '../support/api.js';
import { createPlan, createTarget, planBody, targetBody } from '../support/catalogue.js';
import { rowsOf } from '../../src/database/db.js';
import { future, useHarness } from '../support/harness.js';
import { count, expectExecuted, expectReplayOf, keyRows, memberPayload, newKey, post } from '../support/idempotency.js';

/**
 * Idempotency-Key on POST (docs/idempotency-and-lists.md): a repeat replays the
 * first response byte for byte; what is stored and what releases the key.
 */
describe('Idempotency-Key: replays and what is stored', () => {
  const h = useHarness();

  it('replays POST /memberships byte for byte with Idempotent-Replayed: true; one membership, one event', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const first = await post(t, url, payload, key);
    expectExecuted(first, 201);
    const again = await post(t, url, payload, key);
    const third = await post(t, url, payload, key);
    expectReplayOf(again, first);
    expectReplayOf(third, first);
    // The envelope's request_id is the first request's, as is the header (they always agree).
    expect(again.json().request_id).toBe(first.headers['x-request-id']);
    expect(await count(h, 'memberships', t.projectId)).toBe(1);
    expect((await eventRows(h, t.projectId)).map((e) => e.type)).toStrictEqual(['membership.created']);
    expect(await keyRows(h, t.projectId)).toStrictEqual([{ key, state: 'done', response_status: 201 }]);
  });

  it('replays POST /integrations/webhooks and rotate-secret without the secret, which no record keeps (shown once)', async () => {
    const t = await h.tenant();
    const url = `${t.base}/integrations/webhooks`;
    const key = newKey();
    const first = await post(t, url, { url: 'https://hooks.example.com/idem' }, key);
    expectExecuted(first, 200);
    const { secret, ...shown } = first.json().data;
    expect(secret).toMatch(/\S{16}/);
    const again = await post(t, url, { url: 'https://hooks.example.com/idem' }, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toStrictEqual({ ...first.json(), data: shown });
    expect(await webhookRows(h, t.projectId)).toHaveLength(1);

    const rotateKey = newKey();
    const rotated = await post(t, `${url}/${shown.id}/rotate-secret`, {}, rotateKey);
    expectExecuted(rotated, 200);
    const newSecret = rotated.json().data.secret as string;
    expect(newSecret).toMatch(/\S{16}/);
    // Deleted since: a replay still answers as first, and still without the secret.
    expect((await t.request({ method: 'DELETE', url: `${url}/${shown.id}` })).statusCode).toBe(200);
    const rotatedAgain = await post(t, `${url}/${shown.id}/rotate-secret`, {}, rotateKey);
    expect(rotatedAgain.headers['idempotent-replayed']).toBe('true');
    expect(rotatedAgain.json().data.secret).toBeUndefined();
    const stored = rowsOf<{ response_body: string }>(
      await h.database.db.execute(sql`SELECT response_body FROM idempotency_keys WHERE project_id = ${t.projectId}`),
    ).map((r) => r.response_body);
    expect(stored).toHaveLength(2);
    for (const body of stored) {
      expect(body).not.toContain(secret);
      expect(body).not.toContain(newSecret);
    }
  });

  it.each([
    ['POST /plans', 'plans' as const, () => planBody()],
    ['POST /targets', 'targets' as const, () => targetBody()],
  ])('replays %s: one row, one event', async (_what, table, body) => {
    const t = await h.tenant();
    const url = `${t.base}/${table}`;
    const key = newKey();
    const payload = body();
    const first = await post(t, url, payload, key);
    expectExecuted(first, 201);
    expectReplayOf(await post(t, url, payload, key), first);
    expect(await count(h, table, t.projectId)).toBe(1);
    expect(await eventRows(h, t.projectId)).toHaveLength(1);
  });

  it('replays POST /plans/{plan_id}/targets/{target_id} (a POST without a body)', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const target = await createTarget(t);
    const url = `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}`;
    const key = newKey();
    const first = await post(t, url, undefined, key);
    expectExecuted(first, 200);
    expectReplayOf(await post(t, url, undefined, key), first);
  });

  it('the replay carries the replaying request’s own rate-limit headers', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const first = await post(t, url, payload, key);
    const again = await post(t, url, payload, key);
    expectReplayOf(again, first);
    expect(Number(again.headers['x-ratelimit-remaining'])).toBeLessThan(Number(first.headers['x-ratelimit-remaining']));
  });

  it('stores a 4xx the route itself answered (409 CONFLICT) and replays it even after the cause is gone', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const existing = await createMembership(t);
    const key = newKey();
    const payload = { user_id: existing.user_id, end_date: future(40).iso };
    const first = await post(t, url, payload, key);
    expectExecuted(first, 409);
    const removed = await t.request({ method: 'DELETE', url: `${url}/${existing.membership_id}` });
    expect(removed.statusCode, removed.body).toBe(204);
    const again = await post(t, url, payload, key);
    expectReplayOf(again, first);
    expect(await count(h, 'memberships', t.projectId)).toBe(0);
  });

  it('stores nothing for a request refused by schema validation: the key stays free', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    const refused = await post(t, url, { user_id: 'not digits', end_date: future(5).iso }, key);
    expectExecuted(refused, 422);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
    const fixed = await post(t, url, memberPayload(), key);
    expectExecuted(fixed, 201);
  });

  it.each([
    ['malformed JSON', 400, 'application/json', '{"user_id": '],
    ['a body over 1 MiB', 413, 'application/json', `{"pad": "${'x'.repeat(1024 * 1024)}"}`],
    ['a body that is not JSON', 415, 'text/plain', 'user_id=1'],
  ])('stores nothing for %s (%i): the key stays free', async (_what, status, contentType, body) => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    const refused = await t.request({ method: 'POST', url, payload: body, headers: { 'content-type': contentType, 'idempotency-key': key } });
    expectExecuted(refused, status);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
    expectExecuted(await post(t, url, memberPayload(), key), 201);
  });

  it('stores nothing for a 403 from the gate: the owner can still use the key', async () => {
    const victim = await h.tenant();
    const other = await h.tenant();
    const url = `${victim.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const refused = await victim.request({
      method: 'POST',
      url,
      payload,
      headers: { ...other.headers, 'idempotency-key': key },
    });
    expectExecuted(refused, 403);
    expect(await keyRows(h, victim.projectId)).toStrictEqual([]);
    expectExecuted(await post(victim, url, payload, key), 201);
  });

  it('releases the key on a 5xx, so the retry runs again and succeeds', async () => {
    const t = await h.tenant();
    const url = `${t.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const restore = await failEventInserts(h, t.projectId);
    let failed;
    try {
      failed = await post(t, url, payload, key);
    } finally {
      await restore();
    }
    expectExecuted(failed, 500);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
    const retried = await post(t, url, payload, key);
    expectExecuted(retried, 201, failed);
    expectReplayOf(await post(t, url, payload, key), retried);
  });

  it('without the header every POST runs and nothing is stored', async () => {
    const t = await h.tenant();
    const url = `${t.base}/integrations/webhooks`;
    expectExecuted(await post(t, url, { url: 'https://hooks.example.com/a' }), 200);
    expectExecuted(await post(t, url, { url: 'https://hooks.example.com/a' }), 200);
    expect(await webhookRows(h, t.projectId)).toHaveLength(2);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
  });

  it('a route that opted out (API key creation: its secret must not be stored) ignores the header', async () => {
    const t = await h.tenant();
    const url = `${t.base}/integrations/api-keys`;
    const key = newKey();
    const first = await post(t, url, { label: 'retry' }, key);
    const second = await post(t, url, { label: 'retry' }, key);
    expectExecuted(first, 200);
    expectExecuted(second, 200, first);
    expect(second.json().data.key).not.toBe(first.json().data.key);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
    // Not even validated there: the header means nothing to the route.
    expectExecuted(await post(t, url, { label: 'long key' }, 'k'.repeat(300)), 200);
  });

  it('ignores the header on methods other than POST', async () => {
    const t = await h.tenant();
    const m = await createMembership(t);
    const url = `${t.base}/memberships/${m.user_id}/extend`;
    const key = newKey();
    const first = await t.request({ method: 'PATCH', url, payload: { extend: future(50).iso }, headers: { 'idempotency-key': key } });
    const second = await t.request({ method: 'PATCH', url, payload: { extend: future(50).iso }, headers: { 'idempotency-key': key } });
    expectExecuted(first, 200);
    expectExecuted(second, 200, first);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
  });

  it('scopes keys to the project: the same key in two projects runs in each, and each replays its own', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const key = newKey();
    const payloadA = memberPayload();
    const payloadB = memberPayload();
    const inA = await post(a, `${a.base}/memberships`, payloadA, key);
    const inB = await post(b, `${b.base}/memberships`, payloadB, key);
    expectExecuted(inA, 201);
    expectExecuted(inB, 201, inA);
    expectReplayOf(await post(a, `${a.base}/memberships`, payloadA, key), inA);
    expectReplayOf(await post(b, `${b.base}/memberships`, payloadB, key), inB);
    expect(await count(h, 'memberships', a.projectId)).toBe(1);
    expect(await count(h, 'memberships', b.projectId)).toBe(1);
  });
});
