import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretBoxError } from '../integrations/secret-box.js';
import { isSealed, sealStoredSecrets, SEAL_BATCH, UNSEALED_WARNING, WebhookSecrets, type StoredSecrets } from './webhook-secrets.js';

const SECRET = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const hex = () => randomBytes(32).toString('hex');

/** The webhooks table's secrets in memory: `current` and `previous` per webhook, as stored. */
class MemoryStore implements StoredSecrets {
  rows: { current: string; previous: string | null }[] = [];
  batches: number[] = [];
  async sealUnsealed(seal: (secret: string) => string, limit: number): Promise<number> {
    const due = this.rows.filter((r) => !isSealed(r.current) || (r.previous !== null && !isSealed(r.previous))).slice(0, limit);
    for (const r of due) {
      if (!isSealed(r.current)) r.current = seal(r.current);
      if (r.previous !== null && !isSealed(r.previous)) r.previous = seal(r.previous);
    }
    this.batches.push(due.length);
    return due.length;
  }
  async countByKey(): Promise<{ keyId: string | null; webhooks: number }[]> {
    const counts = new Map<string | null, number>();
    for (const r of this.rows) {
      const key = isSealed(r.current) ? r.current.split('.')[1]! : null;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([keyId, webhooks]) => ({ keyId, webhooks }));
  }
}

describe('webhook secrets at rest', () => {
  const box = SecretBox.ephemeral();

  it('seals with the secret box when there is one, and opens what it sealed and what was stored before sealing', () => {
    const secrets = new WebhookSecrets(box);
    const stored = secrets.toStored(SECRET);
    expect(stored).not.toContain(SECRET);
    expect(isSealed(stored)).toBe(true);
    expect(secrets.open(stored)).toBe(SECRET);
    expect(secrets.open(SECRET)).toBe(SECRET);
    expect(isSealed(SECRET)).toBe(false);
  });

  it('keeps secrets as they are without a key, and names the variable when asked to open a sealed one', () => {
    const keyless = new WebhookSecrets(null);
    expect(keyless.toStored(SECRET)).toBe(SECRET);
    expect(keyless.open(SECRET)).toBe(SECRET);
    const sealed = new WebhookSecrets(box).toStored(SECRET);
    expect(() => keyless.open(sealed)).toThrow(SecretBoxError);
    expect(() => keyless.open(sealed)).toThrow(/TENURE_ENCRYPTION_KEY/);
    expect(() => new WebhookSecrets(SecretBox.ephemeral()).open(sealed)).toThrow(/another encryption key/);
  });

  it('the start seals every unsealed secret, current and previous, in batches, once; a second start changes nothing', async () => {
    const store = new MemoryStore();
    const plain = Array.from({ length: SEAL_BATCH + 3 }, () => ({ current: hex(), previous: null as string | null }));
    plain[0]!.previous = hex();
    store.rows = plain.map((r) => ({ ...r }));
    const secrets = new WebhookSecrets(box);
    expect(await sealStoredSecrets(store, secrets)).toStrictEqual({ sealed: SEAL_BATCH + 3, unreadable: [] });
    expect(store.batches).toStrictEqual([SEAL_BATCH, 3, 0]);
    store.rows.forEach((r, i) => {
      expect(secrets.open(r.current)).toBe(plain[i]!.current);
      expect(r.previous === null ? null : secrets.open(r.previous)).toBe(plain[i]!.previous);
    });
    expect(secrets.notes()).toStrictEqual([{ level: 'info', fields: { webhooks: SEAL_BATCH + 3 }, message: 'the start sealed the webhook signing secrets stored unsealed' }]);

    const before = store.rows.map((r) => ({ ...r }));
    expect(await sealStoredSecrets(store, secrets)).toStrictEqual({ sealed: 0, unreadable: [] });
    expect(store.rows).toStrictEqual(before);
    expect(secrets.notes()).toStrictEqual([]);
  });

  it('without a key nothing is sealed and the notes warn, naming the variable; secrets sealed with another key are an error naming it', async () => {
    const store = new MemoryStore();
    const other = new WebhookSecrets(SecretBox.ephemeral());
    store.rows = [{ current: hex(), previous: null }, { current: other.toStored(hex()), previous: null }];
    const keyless = new WebhookSecrets(null);
    expect(keyless.notes()).toStrictEqual([{ level: 'warn', fields: { variable: 'TENURE_ENCRYPTION_KEY' }, message: UNSEALED_WARNING }]);
    expect(await sealStoredSecrets(store, keyless)).toStrictEqual({ sealed: 0, unreadable: [{ keyId: other.keyId, webhooks: 1 }] });
    expect(isSealed(store.rows[0]!.current)).toBe(false);
    expect(keyless.notes().map((n) => [n.level, n.fields])).toStrictEqual([
      ['warn', { variable: 'TENURE_ENCRYPTION_KEY' }],
      ['error', { variable: 'TENURE_ENCRYPTION_KEY', key_id: other.keyId, webhooks: 1, instance_key_id: null }],
    ]);

    const secrets = new WebhookSecrets(box);
    expect(await sealStoredSecrets(store, secrets)).toStrictEqual({ sealed: 1, unreadable: [{ keyId: other.keyId, webhooks: 1 }] });
    expect(secrets.notes().filter((n) => n.level === 'error').map((n) => n.fields)).toStrictEqual([
      { variable: 'TENURE_ENCRYPTION_KEY', key_id: other.keyId, webhooks: 1, instance_key_id: secrets.keyId },
    ]);
  });
});
