import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../../config.js';
import { parseEncryptionKey, SecretBox } from './secret-box.js';

/**
 * Where the instance's encryption key comes from (docs/access.md, "Connecting a bot"):
 * - TENURE_ENCRYPTION_KEY when set, on any storage; a value that is not 32 bytes in base64 or hex
 *   stops the start with the variable's name (never its value);
 * - else, on embedded storage, `DATA_DIR/encryption.key`, generated on the first start: one
 *   process holds a data directory, and the key lives next to the data it protects;
 * - else, on PostgreSQL, none: processes on several machines cannot share a generated file, so the
 *   operator sets the variable, the same on every process. Until then bot connections are refused.
 */

export const KEY_FILE = 'encryption.key';
const VARIABLE = 'TENURE_ENCRYPTION_KEY';
const KEY_SHAPE = 'must be 32 bytes given as base64 (44 characters, e.g. `openssl rand -base64 32`) or as 64 hex characters';

/** What a bot connection answers, and the worker logs, when the instance has no key. */
export const MISSING_KEY_MESSAGE =
  `Bot tokens cannot be sealed or opened: this instance has no encryption key. Set ${VARIABLE} ` +
  '(32 bytes, base64 or hex, the same on every tenure process) and restart; docs/access.md, "Connecting a bot"';

/** Where a key is kept when the variable is unset. */
export type KeyHome =
  /** Embedded storage on disk: the key file in its data directory. */
  | { kind: 'data-dir'; dataDir: string }
  /** A database that lives only in this process (tests, benches): a key that does too. */
  | { kind: 'memory' }
  /** PostgreSQL: only the variable will do. */
  | { kind: 'none' };

/** The instance's secret box, or null when it has no key (PostgreSQL without TENURE_ENCRYPTION_KEY). */
export async function instanceSecretBox(encryptionKey: string | undefined, home: KeyHome): Promise<SecretBox | null> {
  if (encryptionKey !== undefined) {
    const key = parseEncryptionKey(encryptionKey);
    if (!key) throw new ConfigError(VARIABLE, KEY_SHAPE);
    return new SecretBox(key);
  }
  switch (home.kind) {
    case 'data-dir':
      return new SecretBox(await readOrCreateKeyFile(home.dataDir));
    case 'memory':
      return SecretBox.ephemeral();
    case 'none':
      return null;
  }
}

/**
 * Reads `dataDir/encryption.key`, creating it first if there is none. The new key is written to a
 * file of its own (mode 0600) and hard-linked into place: a link never replaces an existing file,
 * so of two processes starting at once one key wins and both read it; no reader ever sees a
 * half-written key.
 */
export async function readOrCreateKeyFile(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing) return existing;
  // The data directory is the owner's alone (src/database/data-dir-modes.ts); the key is made first.
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(`${randomBytes(32).toString('base64')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, file);
    await syncDirectory(dataDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  const created = await readKeyFile(file);
  if (!created) throw new Error(`${file} vanished while it was being created`);
  return created;
}

async function readKeyFile(file: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const key = parseEncryptionKey(text);
  if (!key) {
    throw new ConfigError(
      VARIABLE,
      `is unset and ${path.resolve(file)} does not hold a key (32 bytes, base64 or hex): restore that file from a backup, ` +
        'or the bot tokens sealed with it cannot be opened (connect the bots again after replacing it)',
    );
  }
  return key;
}

/** Makes the new directory entry durable (a crash right after start must not lose the key). */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the file itself is synced.
  } finally {
    await handle.close();
  }
}
