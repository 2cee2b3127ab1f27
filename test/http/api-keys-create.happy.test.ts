import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { expectSuccess, ISO_MS, UUID } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { apiKeyCreate } from '../support/operations.keys.js';

describe(`${apiKeyCreate.name}: happy`, () => {
  const h = useHarness();

  it('answers 200 with the secret once and its metadata; created_by is the calling key, the scope full by default', async () => {
    const t = await h.tenant();
    const path = `${t.base}/integrations/api-keys`;
    const res = await t.request({ method: 'POST', url: path, payload: { label: 'ci deploys' } });
    const { key, metadata } = res.json().data;
    expect(key).toMatch(/^tk_live_[0-9A-Za-z]{40,44}$/);
    expect(metadata.id).toMatch(UUID);
    expect(metadata.created_at).toMatch(ISO_MS);
    expectSuccess(res, {
      method: 'POST',
      path,
      message: 'API key created successfully',
      data: {
        key,
        metadata: {
          id: metadata.id,
          label: 'ci deploys',
          last_four: key.slice(-4),
          created_at: metadata.created_at,
          created_by: t.keyId,
          updated_at: metadata.created_at,
          updated_by: t.keyId,
          revoked_at: null,
          revoked_by: null,
          scope: 'full',
        },
      },
    });
  });

  it('issues a key that works on its project at once', async () => {
    const t = await h.tenant();
    const res = await t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: 'second' } });
    const { key } = res.json().data;
    const list = await h.app.inject({ method: 'GET', url: `${t.base}/integrations/api-keys`, headers: { authorization: `Bearer ${key}` } });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().total, list.body).toBe(2);
  });

  it('stores only the SHA-256 of the secret, never the secret', async () => {
    const t = await h.tenant();
    const res = await t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: 'hashed' } });
    const { key, metadata } = res.json().data;
    const [row] = rowsOf<Record<string, unknown>>(await h.database.db.execute(sql`SELECT * FROM api_keys WHERE id = ${metadata.id}`));
    expect(row!.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(key);
  });

  it('trims the label and ignores unknown fields, including server-set ones', async () => {
    const t = await h.tenant();
    const res = await t.request({
      method: 'POST',
      url: `${t.base}/integrations/api-keys`,
      payload: { label: '  spaced  ', revoked_at: '2020-01-01T00:00:00.000Z', created_by: 'someone' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { metadata } = res.json().data;
    expect(metadata).toMatchObject({ label: 'spaced', revoked_at: null, created_by: t.keyId });
  });

  it('never stores its response for an Idempotency-Key: the secret stays out of the database', async () => {
    const t = await h.tenant();
    const send = () =>
      t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: 'x' }, headers: { 'idempotency-key': 'once' } });
    const first = await send();
    const second = await send();
    expect(second.headers['idempotent-replayed'], second.body).toBeUndefined();
    expect(second.json().data.key).not.toBe(first.json().data.key);
    const stored = rowsOf(await h.database.db.execute(sql`SELECT * FROM idempotency_keys WHERE project_id = ${t.projectId}`));
    expect(stored).toStrictEqual([]);
  });

  it('gives every key its own secret and id', async () => {
    const t = await h.tenant();
    const issue = () => t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label: 'x' } });
    const [a, b] = await Promise.all([issue(), issue()]);
    expect(a.json().data.key).not.toBe(b.json().data.key);
    expect(a.json().data.metadata.id).not.toBe(b.json().data.metadata.id);
  });
});
