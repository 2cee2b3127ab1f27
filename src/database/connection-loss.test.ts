import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, reportingOnce } from './connection-loss.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a backend terminated (pg_terminate_backend, a fast shutdown)', withCode('terminating connection due to administrator command', '57P01')],
    ['a backend ended by the crash of another', withCode('terminating connection because of crash of another server process', '57P02')],
    ['a server starting or in recovery', withCode('the database system is in recovery mode', '57P03')],
    ['a socket closed under a query', new Error('Connection terminated unexpectedly')],
    ['a statement on a client whose connection was lost', new Error('Client has encountered a connection error and is not queryable')],
    ['a statement on a client already ended', new Error('Client was closed and is not queryable')],
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a full pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
  ])('%s', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
    // drizzle wraps a failed statement (a transaction's ROLLBACK, say) with the driver's error as cause.
    expect(isDatabaseUnavailable(new DrizzleQueryError('rollback', [], err))).toBe(true);
  });

  it('is false for a wrong statement or a broken rule', () => {
    expect(isDatabaseUnavailable(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isDatabaseUnavailable(withCode('syntax error at or near "x"', '42601'))).toBe(false);
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  });
});

describe('reportingOnce', () => {
  it('logs the first error only, with its message and code and nothing else it carries', () => {
    const logged: unknown[][] = [];
    const report = reportingOnce({ warn: (...args: unknown[]) => void logged.push(args) } as never, 'lost');
    const first = Object.assign(withCode('terminating connection due to administrator command', '57P01'), {
      client: { connectionParameters: { password: 'hunter2' } },
    });
    report(first);
    report(new Error('Connection terminated unexpectedly'));
    expect(logged).toEqual([[{ reason: 'terminating connection due to administrator command', code: '57P01' }, 'lost']]);
  });
});
