import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A writer whose writes finish when the test says, recording each batch it was given. */
function gatedWriter() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  let fail: Error | null = null;
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    if (fail) throw fail;
    return `batch ${batches.length}`;
  };
  const open = async () => {
    while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
  };
  return { batches, write, open, failWith: (err: Error | null) => (fail = err) };
}

describe('GroupCommit', () => {
  it('writes items of one turn together, and those that arrive during a write together in the next', async () => {
    const w = gatedWriter();
    const commit = new GroupCommit(10, w.write);
    const first = [commit.add(1), commit.add(2)];
    expect(commit.unwritten).toBe(2);
    await w.open();
    expect(await Promise.all(first)).toStrictEqual(['batch 1', 'batch 1']);
    const second = [commit.add(3)];
    // Handed in while the second write runs: they wait for the third.
    while (w.batches.length < 2) await new Promise((resolve) => setImmediate(resolve));
    const third = [commit.add(4), commit.add(5)];
    expect(commit.unwritten).toBe(3);
    await w.open();
    await w.open();
    expect(await Promise.all([...second, ...third])).toStrictEqual(['batch 2', 'batch 3', 'batch 3']);
    expect(w.batches).toStrictEqual([[1, 2], [3], [4, 5]]);
    expect(commit.unwritten).toBe(0);
  });

  it('splits a backlog into batches of at most maxBatch, one write at a time; flush waits for them all', async () => {
    const w = gatedWriter();
    const commit = new GroupCommit(2, w.write);
    const added = [1, 2, 3, 4, 5].map((n) => commit.add(n));
    let flushed = false;
    const flushing = commit.flush().then(() => (flushed = true));
    for (let i = 0; i < 3; i += 1) await w.open();
    await flushing;
    expect(flushed).toBe(true);
    expect(w.batches).toStrictEqual([[1, 2], [3, 4], [5]]);
    expect(await Promise.all(added)).toStrictEqual(['batch 1', 'batch 1', 'batch 2', 'batch 2', 'batch 3']);
  });

  it('rejects every item of a failed batch with its error, and writes the next batch as before', async () => {
    const w = gatedWriter();
    const commit = new GroupCommit(10, w.write);
    const failed = [commit.add(1), commit.add(2)];
    w.failWith(new Error('connection lost'));
    await w.open();
    await expect(failed[0]).rejects.toThrow('connection lost');
    await expect(failed[1]).rejects.toThrow('connection lost');
    expect(commit.unwritten).toBe(0);
    w.failWith(null);
    const next = commit.add(3);
    await w.open();
    expect(await next).toBe('batch 2');
    expect(w.batches).toStrictEqual([[1, 2], [3]]);
  });
});
