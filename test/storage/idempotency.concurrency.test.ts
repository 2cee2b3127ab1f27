import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { eventRows, expectError, webhookRows } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { count, expectReplayOf, expectReplayWithoutSecret, keyRows, memberPayload, newKey, post } from '../support/idempotency.js';

/**
 * Concurrent duplicates: N identical requests at once. The claim is an INSERT …
 * ON CONFLICT, so exactly one runs; the others see it running (409) or, once it is done, replay it.
 * On PostgreSQL the requests really overlap across pool connections; on PGlite they interleave.
 */
const N = 12;

/** Exactly one response ran; every other is a 409 CONFLICT or a replay of that one. */
function expectOneExecution(
  responses: LightMyRequestResponse[],
  path: string,
  replayOf: (res: LightMyRequestResponse, first: LightMyRequestResponse) => void = expectReplayOf,
): LightMyRequestResponse {
  const executed = responses.filter((r) => r.statusCode !== 409 && r.headers['idempotent-replayed'] === undefined);
  expect(executed, responses.map((r) => `${r.statusCode} ${r.body}`).join('\n')).toHaveLength(1);
  const first = executed[0]!;
  for (const res of responses) {
    if (res === first) continue;
    if (res.statusCode === 409) {
      expectError(res, { status: 409, code: 'CONFLICT', method: 'POST', path, message: expect.stringMatching(/in progress/) });
    } else {
      replayOf(res, first);
    }
  }
  return first;
}

describe('Idempotency-Key: concurrent duplicates', () => {
  const h = useHarness();

  it(`${N} identical POST /memberships at once: one runs, one membership, one event`, async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const key = newKey();
    const payload = memberPayload();
    const responses = await Promise.all(Array.from({ length: N }, () => post(t, path, payload, key)));
    const first = expectOneExecution(responses, path);
    expect(first.statusCode, first.body).toBe(201);
    expect(await count(h, 'memberships', t.projectId)).toBe(1);
    expect((await eventRows(h, t.projectId)).map((e) => e.type)).toStrictEqual(['membership.created']);
    expect(await keyRows(h, t.projectId)).toStrictEqual([{ key, state: 'done', response_status: 201 }]);
    // Once done, every further repeat is the replay.
    expectReplayOf(await post(t, path, payload, key), first);
  });

  it(`${N} identical POST /integrations/webhooks at once: one webhook`, async () => {
    const t = await h.tenant();
    const path = `${t.base}/integrations/webhooks`;
    const key = newKey();
    const responses = await Promise.all(Array.from({ length: N }, () => post(t, path, { url: 'https://hooks.example.com/c' }, key)));
    // The secret is shown once: the replays carry the webhook without it.
    expectOneExecution(responses, path, expectReplayWithoutSecret);
    expect(await webhookRows(h, t.projectId)).toHaveLength(1);
  });

  it(`${N} different bodies under one key at once: one runs, the rest get 409 or 422`, async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const key = newKey();
    const responses = await Promise.all(Array.from({ length: N }, () => post(t, path, memberPayload(), key)));
    const ran = responses.filter((r) => r.statusCode === 201);
    expect(ran, responses.map((r) => r.body).join('\n')).toHaveLength(1);
    for (const res of responses) {
      if (res === ran[0]) continue;
      expect([409, 422], res.body).toContain(res.statusCode);
    }
    expect(await count(h, 'memberships', t.projectId)).toBe(1);
  });

  it(`${N} different keys at once run independently`, async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const responses = await Promise.all(Array.from({ length: N }, () => post(t, path, memberPayload(), newKey())));
    expect(responses.map((r) => r.statusCode)).toStrictEqual(Array(N).fill(201));
    expect(await count(h, 'memberships', t.projectId)).toBe(N);
    expect(await keyRows(h, t.projectId)).toHaveLength(N);
  });
});
