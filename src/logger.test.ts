import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The stdout destination in a process of its own (it is one per process, on fd 1), with the write
 * calls sonic-boom makes counted: lines leave within the 100 ms flush, and a logger with nothing to
 * say makes no write calls at all (an empty flush was still one, ten a second, at rest).
 */
const CHILD = `
import fs from 'node:fs';
const write = fs.write;
let calls = 0;
fs.write = (...args) => { calls++; return write(...args); };
const { createLogger } = await import(${JSON.stringify(path.resolve(import.meta.dirname, 'logger.ts'))});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const logger = createLogger('info');
logger.info('first line');
await sleep(400);
const afterFirst = calls;
await sleep(1200);
const afterIdle = calls;
logger.info('second line');
await sleep(400);
process.stderr.write(JSON.stringify({ afterFirst, afterIdle, afterSecond: calls }));
`;

describe('stdout logger', () => {
  it('writes a line within its flush interval and makes no write calls while there is nothing to write', async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: path.resolve(import.meta.dirname, '..') });
    const calls = JSON.parse(stderr) as { afterFirst: number; afterIdle: number; afterSecond: number };
    expect(stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { msg: string }).msg)).toStrictEqual(['first line', 'second line']);
    expect(calls.afterFirst).toBeGreaterThanOrEqual(1);
    expect(calls.afterIdle).toBe(calls.afterFirst);
    expect(calls.afterSecond).toBe(calls.afterIdle + 1);
  });
});
