import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';

/** A logger as the product makes it, whose JSON lines are kept, parsed, for the test to read. */
export function capturedLogs<T = Record<string, unknown>>(level = 'info') {
  const lines: T[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as T);
      done();
    },
  });
  return { lines, logger: createLogger(level, stream) };
}
