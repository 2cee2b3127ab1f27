import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productNode } from '../support/processes.js';
import { scratch } from './ops-support.js';

/**
 * The platform client libraries are loaded at first use (src/lazy-library.ts, docs/memory.md): a
 * server with no Discord bot, Telegram bot or Stripe account connected, the default on a fresh
 * install, never loads them. The server runs in a process of its own (platform-libraries.child.ts),
 * where nothing else has imported them, from the sources.
 */

const CHILD = fileURLToPath(new URL('./platform-libraries.child.ts', import.meta.url));
const LAZY = /\/node_modules\/(?:@discordjs\/(?:rest|ws|collection)|grammy|stripe)\//;
const run = promisify(execFile);

describe('platform libraries at start', () => {
  let dir: Awaited<ReturnType<typeof scratch>>;
  beforeAll(async () => {
    dir = await scratch('platform-libraries', { embedded: true });
  });
  afterAll(() => dir?.remove());

  it('a server with no bot and no Stripe account loads none of @discordjs/rest, @discordjs/ws, grammy, stripe', async () => {
    const env = { ...dir.env, HOST: '127.0.0.1', PORT: '0', TENURE_DEMO_PROJECT: 'false' };
    const { stdout } = await run(process.execPath, productNode(['--import', 'tsx', CHILD]), { env, timeout: 60_000 });
    const resolved = JSON.parse(stdout.trim().split('\n').at(-1)!) as string[];
    // The recording works: the server's own libraries are in it.
    expect(resolved.some((url) => url.includes('/node_modules/fastify/'))).toBe(true);
    expect(resolved.filter((url) => LAZY.test(url))).toEqual([]);
  });
});
