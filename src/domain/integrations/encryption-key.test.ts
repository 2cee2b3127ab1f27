import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../config.js';
import { instanceSecretBox, KEY_FILE, readOrCreateKeyFile } from './encryption-key.js';
import { parseEncryptionKey, SecretBox } from './secret-box.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tenure-key-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The ConfigError `fn` throws (failing the test if it throws nothing or something else). */
async function configError(fn: () => Promise<unknown>): Promise<ConfigError> {
  const err = await fn().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describe('instanceSecretBox', () => {
  it('uses TENURE_ENCRYPTION_KEY when set, on any storage, and writes no key file', async () => {
    const key = randomBytes(32);
    const sealed = new SecretBox(key).seal('token');
    for (const home of [{ kind: 'data-dir', dataDir: dir }, { kind: 'memory' }, { kind: 'none' }] as const) {
      const box = await instanceSecretBox(key.toString('base64'), home);
      expect(box?.open(sealed)).toBe('token');
    }
    expect(await readdir(dir)).toStrictEqual([]);
  });

  it.each([
    ['a passphrase', 'my very secret passphrase'],
    ['31 bytes of hex', randomBytes(31).toString('hex')],
    ['base64 of 48 bytes', randomBytes(48).toString('base64')],
  ])('stops with a ConfigError naming TENURE_ENCRYPTION_KEY, never echoing it, for %s', async (_what, value) => {
    const err = await configError(() => instanceSecretBox(value, { kind: 'data-dir', dataDir: dir }));
    expect(err.variable).toBe('TENURE_ENCRYPTION_KEY');
    expect(err.message).toBe(
      'Invalid configuration: TENURE_ENCRYPTION_KEY must be 32 bytes given as base64 (44 characters, e.g. `openssl rand -base64 32`) or as 64 hex characters',
    );
    expect(err.message).not.toContain(value);
    expect(await readdir(dir)).toStrictEqual([]);
  });

  it('generates DATA_DIR/encryption.key on embedded storage, mode 0600, and opens with it on the next start', async () => {
    const first = await instanceSecretBox(undefined, { kind: 'data-dir', dataDir: dir });
    const file = path.join(dir, KEY_FILE);
    expect(((await stat(file)).mode & 0o777).toString(8)).toBe('600');
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    const again = await instanceSecretBox(undefined, { kind: 'data-dir', dataDir: dir });
    expect(again!.keyId).toBe(first!.keyId);
    expect(again!.open(first!.seal('token'))).toBe('token');
    // The file's content is what TENURE_ENCRYPTION_KEY takes when moving to PostgreSQL.
    const fromVariable = await instanceSecretBox(text.trim(), { kind: 'none' });
    expect(fromVariable!.open(first!.seal('token'))).toBe('token');
  });

  it('creates the data directory when it does not exist yet', async () => {
    const nested = path.join(dir, 'a', 'b');
    const box = await instanceSecretBox(undefined, { kind: 'data-dir', dataDir: nested });
    expect(box).toBeInstanceOf(SecretBox);
    expect(await readdir(nested)).toStrictEqual([KEY_FILE]);
  });

  it('reads a key file an operator wrote in hex', async () => {
    const key = randomBytes(32);
    await writeFile(path.join(dir, KEY_FILE), key.toString('hex'));
    const box = await instanceSecretBox(undefined, { kind: 'data-dir', dataDir: dir });
    expect(box!.keyId).toBe(new SecretBox(key).keyId);
  });

  it('stops with a ConfigError naming the variable and the file when the key file is damaged, and leaves the file alone', async () => {
    const file = path.join(dir, KEY_FILE);
    await writeFile(file, 'not a key\n');
    const err = await configError(() => instanceSecretBox(undefined, { kind: 'data-dir', dataDir: dir }));
    expect(err.variable).toBe('TENURE_ENCRYPTION_KEY');
    expect(err.message).toContain(`is unset and ${file} does not hold a key`);
    expect(await readFile(file, 'utf8')).toBe('not a key\n');
  });

  it('keeps a key in memory for a database that lives in memory, a new one each time', async () => {
    const [a, b] = await Promise.all([instanceSecretBox(undefined, { kind: 'memory' }), instanceSecretBox(undefined, { kind: 'memory' })]);
    expect(a).toBeInstanceOf(SecretBox);
    expect(a!.keyId).not.toBe(b!.keyId);
  });

  it('has no box on PostgreSQL without the variable', async () => {
    expect(await instanceSecretBox(undefined, { kind: 'none' })).toBeNull();
  });
});

describe('readOrCreateKeyFile', () => {
  it('gives every concurrent first start the same key, and leaves no temporary file', async () => {
    const keys = await Promise.all(Array.from({ length: 12 }, () => readOrCreateKeyFile(dir)));
    expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(1);
    expect(await readdir(dir)).toStrictEqual([KEY_FILE]);
    expect(parseEncryptionKey(await readFile(path.join(dir, KEY_FILE), 'utf8'))).toStrictEqual(keys[0]);
  });
});
