import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createContainer } from '../../src/container.js';
import { KEY_FILE, MISSING_KEY_MESSAGE } from '../../src/domain/integrations/encryption-key.js';
import { createLogger } from '../../src/logger.js';
import { startWorkerRuntime } from '../../src/worker-runtime.js';
import { testConfig, useHarness } from '../support/harness.js';
import { scratch, seedDataDir } from './ops-support.js';
import { productNode } from '../support/processes.js';
import { capturedLogs } from '../support/logs.js';

/**
 * The instance's encryption key as an operator meets it (docs/access.md, "The encryption key"):
 * a malformed TENURE_ENCRYPTION_KEY stops the server before anything opens; on embedded storage a
 * key file is generated on the first start and read on the next; without a key the worker says so.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

describe('the instance encryption key', () => {
  const h = useHarness();

  it('a malformed TENURE_ENCRYPTION_KEY stops the server with exit 2 and one line naming the variable, never the value, before storage opens', async () => {
    const dir = await scratch('bad-key', { empty: true });
    try {
      const value = 'correct-horse-battery-staple-but-not-32-bytes';
      const child = spawn(process.execPath, productNode([MAIN]), {
        env: { ...dir.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', TENURE_ENCRYPTION_KEY: value },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect(code, stderr + stdout).toBe(2);
      expect(stderr).toBe(
        'tenure: Invalid configuration: TENURE_ENCRYPTION_KEY must be 32 bytes given as base64 (44 characters, e.g. `openssl rand -base64 32`) or as 64 hex characters\n',
      );
      expect(stdout + stderr).not.toContain(value);
      expect(existsSync(dir.env.DATA_DIR!), 'the data directory was not created').toBe(false);
    } finally {
      await dir.remove();
    }
  });

  it('on embedded storage a key is generated in DATA_DIR/encryption.key on the first start, and the next start opens what the first sealed', async () => {
    const dir = await scratch('key-file', { empty: true });
    try {
      const dataDir = dir.env.DATA_DIR!;
      await seedDataDir(dataDir);
      const config = testConfig({ DATA_DIR: dataDir, TENURE_ENCRYPTION_KEY: '' });
      const first = await createContainer({ config, logger: createLogger('silent'), open: { lockWaitMs: 0 } });
      const sealed = first.secretBox!.seal('a bot token');
      await first.close();
      const file = path.join(dataDir, KEY_FILE);
      expect(((await stat(file)).mode & 0o777).toString(8)).toBe('600');
      const key = (await readFile(file, 'utf8')).trim();

      const second = await createContainer({ config, logger: createLogger('silent'), open: { lockWaitMs: 0 } });
      try {
        expect(second.secretBox!.open(sealed)).toBe('a bot token');
      } finally {
        await second.close();
      }
      // The file's content is the key: given as TENURE_ENCRYPTION_KEY (PostgreSQL, say), it opens the same tokens.
      const elsewhere = await createContainer({ config: testConfig({ TENURE_ENCRYPTION_KEY: key }), logger: createLogger('silent'), database: h.database });
      expect(elsewhere.secretBox!.open(sealed)).toBe('a bot token');
      await elsewhere.close();
    } finally {
      await dir.remove();
    }
  });

  it('the worker says once, naming the variable, when it has no key to open bot tokens with; with a key it says nothing of it', async () => {
    const without = capturedLogs();
    const runtime = await startWorkerRuntime({ ...h.container, secretBox: null, logger: without.logger }, { stopGraceMs: 0 });
    await runtime.stop();
    const warned = without.lines.filter((l) => l.msg === MISSING_KEY_MESSAGE);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, variable: 'TENURE_ENCRYPTION_KEY' });

    const withKey = capturedLogs();
    const second = await startWorkerRuntime({ ...h.container, logger: withKey.logger }, { stopGraceMs: 0 });
    await second.stop();
    expect(withKey.lines.filter((l) => String(l.msg).includes('TENURE_ENCRYPTION_KEY'))).toStrictEqual([]);
  });
});
