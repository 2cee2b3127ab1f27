import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { WriteBatcher } from './write-batcher.js';

interface Write {
  member: string;
  value: number;
}

/**
 * A batcher over a fake statement: each run is recorded (its key and members) and stays open until
 * the test finishes it, with the outcome `value * 10` per write, or fails it.
 */
function harness(options: { maxInFlight: number; maxBatch?: number; failing?: (items: readonly Write[]) => boolean }) {
  const runs: { key: string; members: string[]; open: boolean; finish: () => void }[] = [];
  const batcher = new WriteBatcher<Write, number>({
    maxInFlight: options.maxInFlight,
    maxBatch: options.maxBatch ?? 100,
    identity: (w) => w.member,
    run: (key, items) =>
      new Promise<number[]>((resolve, reject) => {
        const run = {
          key,
          members: items.map((i) => i.member),
          open: true,
          finish: () => {
            run.open = false;
            if (options.failing?.(items)) reject(new Error(`failed: ${run.members.join(',')}`));
            else resolve(items.map((i) => i.value * 10));
          },
        };
        runs.push(run);
      }),
  });
  /** Two turns of the event loop: a finished statement settles, then the batcher starts what waits. */
  const turns = async () => {
    await nextTurn();
    await nextTurn();
  };
  /** Finishes every open statement and what the batcher starts after them, until none is open. */
  const drain = async () => {
    await turns();
    for (let open = runs.filter((r) => r.open); open.length > 0; open = runs.filter((r) => r.open)) {
      for (const r of open) r.finish();
      await turns();
    }
  };
  const started = () => runs.map((r) => `${r.key}:${r.members.join(',')}`);
  return { batcher, runs, turns, drain, members: () => runs.map((r) => r.members.join(',')), started };
}

describe('WriteBatcher', () => {
  it('runs a write alone when nothing of its key is running, one turn of the event loop later', async () => {
    const { batcher, members, drain } = harness({ maxInFlight: 1 });
    const answer = batcher.submit('p', { member: 'a', value: 1 });
    expect(members()).toStrictEqual([]);
    await nextTurn();
    expect(members()).toStrictEqual(['a']);
    await drain();
    expect(await answer).toBe(10);
  });

  it('puts the writes submitted in one turn in one statement, and those that wait for a slot in the next', async () => {
    const { batcher, members, drain } = harness({ maxInFlight: 1 });
    const first = ['a', 'b', 'c'].map((m, i) => batcher.submit('p', { member: m, value: i }));
    await nextTurn();
    const later = ['d', 'e'].map((m, i) => batcher.submit('p', { member: m, value: 10 + i }));
    await nextTurn();
    // The first statement still runs: d and e wait for it.
    expect(members()).toStrictEqual(['a,b,c']);
    await drain();
    expect(members()).toStrictEqual(['a,b,c', 'd,e']);
    expect(await Promise.all([...first, ...later])).toStrictEqual([0, 10, 20, 100, 110]);
  });

  it('runs up to maxInFlight statements of a key at once', async () => {
    const { batcher, members, drain } = harness({ maxInFlight: 2 });
    const a = batcher.submit('p', { member: 'a', value: 1 });
    await nextTurn();
    const b = batcher.submit('p', { member: 'b', value: 2 });
    await nextTurn();
    const c = batcher.submit('p', { member: 'c', value: 3 });
    const d = batcher.submit('p', { member: 'd', value: 4 });
    await nextTurn();
    expect(members()).toStrictEqual(['a', 'b']);
    await drain();
    expect(members()).toStrictEqual(['a', 'b', 'c,d']);
    expect(await Promise.all([a, b, c, d])).toStrictEqual([10, 20, 30, 40]);
  });

  it('never puts two writes of one member in a statement: the second goes in the next, in order', async () => {
    const { batcher, members, drain } = harness({ maxInFlight: 1 });
    const answers = [
      batcher.submit('p', { member: 'a', value: 1 }),
      batcher.submit('p', { member: 'b', value: 2 }),
      batcher.submit('p', { member: 'a', value: 3 }),
      batcher.submit('p', { member: 'a', value: 4 }),
      batcher.submit('p', { member: 'c', value: 5 }),
    ];
    await drain();
    expect(members()).toStrictEqual(['a,b,c', 'a', 'a']);
    expect(await Promise.all(answers)).toStrictEqual([10, 20, 30, 40, 50]);
  });

  it('keeps statements to maxBatch writes', async () => {
    const { batcher, members, drain } = harness({ maxInFlight: 1, maxBatch: 2 });
    const answers = ['a', 'b', 'c', 'd', 'e'].map((m, i) => batcher.submit('p', { member: m, value: i }));
    await drain();
    expect(members()).toStrictEqual(['a,b', 'c,d', 'e']);
    expect(await Promise.all(answers)).toStrictEqual([0, 10, 20, 30, 40]);
  });

  it('batches each key apart, and a key whose statement waits holds back no other', async () => {
    const { batcher, runs, turns, drain, started } = harness({ maxInFlight: 1 });
    const p1 = batcher.submit('p', { member: 'a', value: 1 });
    const q1 = batcher.submit('q', { member: 'a', value: 2 });
    await nextTurn();
    const p2 = batcher.submit('p', { member: 'b', value: 3 });
    const q2 = batcher.submit('q', { member: 'b', value: 4 });
    await nextTurn();
    expect(started()).toStrictEqual(['p:a', 'q:a']);
    // q's statement finishes while p's still runs: q's next starts without waiting for p.
    runs[1]!.finish();
    await turns();
    expect(started()).toStrictEqual(['p:a', 'q:a', 'q:b']);
    await drain();
    expect(started()).toStrictEqual(['p:a', 'q:a', 'q:b', 'p:b']);
    expect(await Promise.all([p1, q1, p2, q2])).toStrictEqual([10, 20, 30, 40]);
  });

  it('runs the writes of a failed statement again alone: only the write that fails alone fails', async () => {
    const { batcher, members, drain } = harness({ maxInFlight: 1, failing: (items) => items.some((i) => i.member === 'bad') });
    const answers = ['a', 'bad', 'c'].map((m, i) => batcher.submit('p', { member: m, value: i + 1 }).catch((e: Error) => e.message));
    await drain();
    expect(members()).toStrictEqual(['a,bad,c', 'a', 'bad', 'c']);
    expect(await Promise.all(answers)).toStrictEqual([10, 'failed: bad', 30]);
  });

  it('rejects a write alone with its own error', async () => {
    const { batcher, drain } = harness({ maxInFlight: 1, failing: () => true });
    const answer = batcher.submit('p', { member: 'a', value: 1 }).catch((e: Error) => e.message);
    await drain();
    expect(await answer).toBe('failed: a');
  });

  it('treats a statement that throws at once like one that fails', async () => {
    const batcher = new WriteBatcher<Write, number>({
      maxInFlight: 1,
      maxBatch: 10,
      identity: (w) => w.member,
      run: (_key, items) => {
        if (items.some((i) => i.member === 'bad')) throw new Error('thrown');
        return Promise.resolve(items.map((i) => i.value));
      },
    });
    const answers = ['a', 'bad', 'c'].map((m, i) => batcher.submit('p', { member: m, value: i }).catch((e: Error) => e.message));
    expect(await Promise.all(answers)).toStrictEqual([0, 'thrown', 2]);
  });

  it('refuses limits below one', () => {
    const run = async () => [];
    expect(() => new WriteBatcher({ maxInFlight: 0, maxBatch: 1, identity: String, run })).toThrow(RangeError);
    expect(() => new WriteBatcher({ maxInFlight: 1, maxBatch: 0, identity: String, run })).toThrow(RangeError);
  });
});
