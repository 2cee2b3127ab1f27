import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../store/projects.store.js';
import { generateKeySecret, hashKeySecret } from './api-key-secret.js';
import { AuthService, KEY_CACHE_ENTRIES, type KeyLookupStatements } from './auth.service.js';

/** findKeyByHash over a map of issued keys: the statement's contract, nothing else. */
function issuedKeys(count: number): { store: KeyLookupStatements; secrets: string[] } {
  const byHash = new Map<string, ApiKeyRecord>();
  const secrets: string[] = [];
  const projectId = randomUUID();
  for (let i = 0; i < count; i++) {
    const secret = generateKeySecret();
    const at = new Date();
    byHash.set(hashKeySecret(secret), {
      id: randomUUID(), projectId, label: null, lastFour: secret.slice(-4), scope: 'full',
      createdAt: at, createdBy: null, updatedAt: at, updatedBy: null, revokedAt: null, revokedBy: null,
    });
    secrets.push(secret);
  }
  return { store: { findKeyByHash: (hash) => Promise.resolve(byHash.get(hash) ?? null) }, secrets };
}

describe('the API key cache under a flood', () => {
  it('holds at most KEY_CACHE_ENTRIES keys however many distinct valid keys are used', async () => {
    const { store, secrets } = issuedKeys(KEY_CACHE_ENTRIES * 2 + 500);
    const auth = new AuthService(store, 60_000);
    for (const secret of secrets) expect((await auth.authenticate(`Bearer ${secret}`)).ok).toBe(true);
    expect(auth.cachedKeys).toBe(KEY_CACHE_ENTRIES);
    // The most recent keys are the ones kept: the last one answers from the cache.
    expect(auth.peek(`Bearer ${secrets.at(-1)!}`)?.ok).toBe(true);
    expect(auth.peek(`Bearer ${secrets[0]!}`)).toBeUndefined();
  });

  it('keeps nothing of a flood of distinct unknown keys', async () => {
    const { store } = issuedKeys(1);
    const auth = new AuthService(store, 60_000);
    for (let i = 0; i < 20_000; i++) {
      const refused = await auth.authenticate(`Bearer ${generateKeySecret()}`);
      expect(refused.ok).toBe(false);
    }
    expect(auth.cachedKeys).toBe(0);
  });
});
