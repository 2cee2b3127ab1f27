import { describe, expect, it } from 'vitest';
import { transactorOver } from '../transactions.js';
import { AccessCompletions, settleCompletions, type AccessCompletionStatements, type AccessCompletion, type OutcomeWrite, type TargetFault } from './access-completions.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const LATER = new Date('2030-01-01T00:00:05Z');
const T = '00000000-0000-4000-8000-000000000001';
const U = '00000000-0000-4000-8000-000000000002';
const key = { projectId: 'p', platform: 'discord' as const };
const missing = { code: '50013', message: 'Missing Permissions' };
const flaky = { code: 'server_error', message: '502' };

describe('settleCompletions: what each outcome writes', () => {
  it('settles a success with its event, a failure with access.failed, and leaves the rest unannounced', () => {
    const { writes } = settleCompletions(
      [
        { targetId: T, userId: '1', desired: 'granted', outcome: 'applied' },
        { targetId: T, userId: '2', desired: 'revoked', outcome: 'applied' },
        { targetId: T, userId: '3', desired: 'revoked', outcome: 'unchanged' },
        { targetId: T, userId: '4', desired: 'granted', outcome: 'failed', targetFault: false, error: missing },
        { targetId: T, userId: '5', desired: 'granted', outcome: 'waiting_for_member', error: { code: '10007', message: 'Unknown Member' } },
        { targetId: T, userId: '6', desired: 'granted', outcome: 'retry', error: flaky, nextAttemptAt: LATER },
        { targetId: T, userId: '7', desired: 'granted', outcome: 'unauthorized', error: { code: 'unauthorized', message: '401' } },
      ],
      NOW,
    );
    expect(writes.map((w) => [w.userId, w.succeeded, w.state, w.applied, w.synced, w.nextAttemptAt, w.event])).toStrictEqual([
      ['1', true, 'synced', 'granted', true, null, 'access.granted'],
      ['2', true, 'synced', 'revoked', true, null, 'access.revoked'],
      ['3', false, 'synced', null, true, null, null],
      ['4', false, 'failed', null, false, null, 'access.failed'],
      ['5', false, 'waiting_for_member', 'revoked', false, null, null],
      ['6', false, 'pending', null, false, LATER, null],
      ['7', false, 'pending', null, false, NOW, null],
    ]);
    expect(writes.map((w) => w.error?.code ?? null)).toStrictEqual([null, null, null, '50013', '10007', 'server_error', 'unauthorized']);
  });

  it('blames a target with its first member\u2019s error, fails the batch\u2019s retries there with it, and names the refused token once', () => {
    const other = { code: '10011', message: 'Unknown Role' };
    const settled = settleCompletions(
      [
        { targetId: T, userId: '9', desired: 'granted', outcome: 'failed', targetFault: true, error: other },
        { targetId: T, userId: '10', desired: 'granted', outcome: 'failed', targetFault: true, error: { ...missing, extra: 1 } as typeof missing },
        { targetId: T, userId: '11', desired: 'granted', outcome: 'retry', error: flaky, nextAttemptAt: LATER },
        { targetId: U, userId: '11', desired: 'granted', outcome: 'retry', error: flaky, nextAttemptAt: LATER },
        { targetId: U, userId: '12', desired: 'granted', outcome: 'unauthorized', error: { code: 'unauthorized', message: 'first' } },
        { targetId: U, userId: '13', desired: 'granted', outcome: 'unauthorized', error: { code: 'unauthorized', message: 'second' } },
      ],
      NOW,
    );
    // By user id as the database orders text: '10' before '9'; only code and message are kept.
    expect(settled.faults).toStrictEqual([{ targetId: T, error: missing }]);
    expect(settled.writes[2]).toMatchObject({ state: 'failed', error: missing, event: 'access.failed', nextAttemptAt: null });
    expect(settled.writes[3]).toMatchObject({ state: 'pending', error: flaky, nextAttemptAt: LATER });
    expect(settled.refusal).toStrictEqual({ code: 'unauthorized', message: 'first' });
  });
});

/** The statements as a twin: what the use case asked for, and a lease held or not. */
function statements(o: { held: boolean }) {
  const calls: string[] = [];
  const twin: AccessCompletionStatements = {
    recordOutcomes: (_owner, _key, _now, writes: readonly OutcomeWrite[]) => {
      calls.push(`record ${writes.length}`);
      return Promise.resolve(o.held ? { generation: 3, recorded: writes.map((w) => `${w.targetId}:${w.userId}`) } : { generation: null, recorded: [] });
    },
    failTargets: (_projectId, generation, faults: readonly TargetFault[], spared) => {
      calls.push(`fail ${faults.map((f) => f.targetId).join()} gen ${generation} sparing ${spared.join()}`);
      return Promise.resolve({ flagged: faults.map((f) => f.targetId), cascaded: 2 });
    },
    flagRefusedBot: (_owner, _key, _now, error) => {
      calls.push(`refused ${error.message}`);
      return Promise.resolve();
    },
  };
  return { calls, completions: new AccessCompletions(transactorOver({ accessWorker: twin })) };
}

describe('AccessCompletions.record: a batch, one transaction', () => {
  const blamed: AccessCompletion = { targetId: T, userId: '1', desired: 'granted', outcome: 'failed', targetFault: true, error: missing };
  const refused: AccessCompletion = { targetId: U, userId: '2', desired: 'granted', outcome: 'unauthorized', error: { code: 'unauthorized', message: '401' } };

  it('writes the rows, then the blamed targets sparing the rows written, then the refused bot', async () => {
    const { calls, completions } = statements({ held: true });
    const result = await completions.record('w', key, NOW, [blamed, refused]);
    expect(calls).toStrictEqual(['record 2', `fail ${T} gen 3 sparing ${T}:1,${U}:2`, 'refused 401']);
    expect(result).toStrictEqual({ recorded: new Set([`${T}:1`, `${U}:2`]), cascaded: 2, unhealthyTargets: [T], held: true });
  });

  it('is one statement for a batch with no blame or refusal, and stops at the rows when the lease is gone', async () => {
    const plain = statements({ held: true });
    await plain.completions.record('w', key, NOW, [{ targetId: T, userId: '1', desired: 'granted', outcome: 'applied' }]);
    expect(plain.calls).toStrictEqual(['record 1']);
    const lost = statements({ held: false });
    expect(await lost.completions.record('w', key, NOW, [blamed, refused])).toStrictEqual({ recorded: new Set(), cascaded: 0, unhealthyTargets: [], held: false });
    expect(lost.calls).toStrictEqual(['record 2']);
  });

  it('writes nothing for an empty batch', async () => {
    const { calls, completions } = statements({ held: true });
    expect(await completions.record('w', key, NOW, [])).toMatchObject({ held: true, recorded: new Set() });
    expect(calls).toStrictEqual([]);
  });
});
