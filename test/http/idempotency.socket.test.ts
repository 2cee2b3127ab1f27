import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type Tenant } from '../support/harness.js';
import { count, keyRows, memberPayload, newKey } from '../support/idempotency.js';

/**
 * Idempotency-Key over a real socket with a real HTTP client: the body is hashed as it streams in
 * (chunked uploads included), and the replay's bytes are the first response's bytes on the wire.
 */
describe('Idempotency-Key over HTTP', () => {
  let h: Harness;
  let origin: string;
  beforeAll(async () => {
    h = await createHarness();
    origin = await h.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => h.close());

  /** Sends `body` in chunks (Transfer-Encoding: chunked), so the server reads it piece by piece. */
  function chunked(t: Tenant, path: string, body: string, key: string, chunkSize = 7): Promise<Response> {
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += chunkSize) controller.enqueue(bytes.slice(i, i + chunkSize));
        controller.close();
      },
    });
    return fetch(`${origin}${path}`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { ...t.headers, 'content-type': 'application/json', 'idempotency-key': key },
    } as RequestInit);
  }

  it('a chunked first request and a one-piece repeat of the same bytes: one execution, the same bytes back', async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const key = newKey();
    const body = JSON.stringify(memberPayload());
    const first = await chunked(t, path, body, key);
    const firstBytes = Buffer.from(await first.arrayBuffer());
    expect(first.status, firstBytes.toString()).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await fetch(`${origin}${path}`, {
      method: 'POST',
      body,
      headers: { ...t.headers, 'content-type': 'application/json', 'idempotency-key': key },
    });
    const againBytes = Buffer.from(await again.arrayBuffer());
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(againBytes.equals(firstBytes)).toBe(true);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('content-length')).toBe(String(firstBytes.length));
    expect(await count(h, 'memberships', t.projectId)).toBe(1);
  });

  it('a chunked body over 1 MiB is a 413, the key stays free, and the server keeps serving', async () => {
    const t = await h.tenant();
    const path = `${t.base}/memberships`;
    const key = newKey();
    const big = await chunked(t, path, `{"pad": "${'x'.repeat(1024 * 1024 + 10)}"}`, key, 64 * 1024);
    expect(big.status, await big.text()).toBe(413);
    expect(await keyRows(h, t.projectId)).toStrictEqual([]);
    const ok = await chunked(t, path, JSON.stringify(memberPayload()), key);
    expect(ok.status, await ok.text()).toBe(201);
  });
});
