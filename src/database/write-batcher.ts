/**
 * Groups concurrent single-row writes of one key (a project) into one statement (docs/memberships.md,
 * "Extending one member"). Writes are started after the current turn of the event loop, so every
 * request whose bytes came in that turn has been submitted by then; while fewer than `maxInFlight`
 * statements of the key run, the waiting writes start at once as one statement. Beyond that they
 * wait, and the next statement of the key to start takes all of them, up to `maxBatch`. An idle
 * service answers as it would without a batcher (a write alone, one turn of the loop later); under
 * load, one statement, one commit and one trigger call serve several requests, while the database
 * works on the ones already sent. Keys are independent: a project whose statements wait on row
 * locks (a bulk extend) holds back no other project's writes.
 *
 * A batch holds one write per identity (a member): a second write of a member waits for the next
 * statement, so each write reads what the one before it left, as two requests one after the other
 * would. When a batch's statement fails, each of its writes is run again alone, so a write fails
 * only for a reason of its own, as it would have without the batcher.
 */
export interface WriteBatcherOptions<I, O> {
  /** Statements of one key running at once; the key's writes beyond them wait and are batched. */
  maxInFlight: number;
  /** Writes in one statement at most. */
  maxBatch: number;
  /** Writes of one identity never share a statement. */
  identity: (item: I) => string;
  /** Runs one batch of one key's writes, of distinct identities, as one statement: one outcome per item, in order. */
  run: (key: string, items: readonly I[]) => Promise<O[]>;
}

interface Pending<I, O> {
  item: I;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
}

interface KeyState<I, O> {
  waiting: Pending<I, O>[];
  running: number;
}

export class WriteBatcher<I, O> {
  /** Keys with writes waiting or statements running; a key leaves when it has neither. */
  private readonly keys = new Map<string, KeyState<I, O>>();
  private scheduled = false;

  constructor(private readonly options: WriteBatcherOptions<I, O>) {
    if (options.maxInFlight < 1 || options.maxBatch < 1) throw new RangeError('maxInFlight and maxBatch must be at least 1');
  }

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      let state = this.keys.get(key);
      if (!state) this.keys.set(key, (state = { waiting: [], running: 0 }));
      state.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Starts what may start, after this turn of the event loop (see the file comment). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    for (const [key, state] of this.keys) {
      while (state.running < this.options.maxInFlight && state.waiting.length > 0) {
        const batch = this.take(state.waiting);
        state.running++;
        void this.execute(key, batch).finally(() => {
          state.running--;
          if (state.waiting.length > 0) this.schedule();
          else if (state.running === 0) this.keys.delete(key);
        });
      }
    }
  }

  /** Removes from `queue` its oldest writes of distinct identities, up to maxBatch. */
  private take(queue: Pending<I, O>[]): Pending<I, O>[] {
    const batch: Pending<I, O>[] = [];
    const seen = new Set<string>();
    let kept = 0;
    for (const pending of queue) {
      const id = this.options.identity(pending.item);
      if (batch.length < this.options.maxBatch && !seen.has(id)) {
        seen.add(id);
        batch.push(pending);
      } else {
        queue[kept++] = pending;
      }
    }
    queue.length = kept;
    return batch;
  }

  private async execute(key: string, batch: Pending<I, O>[]): Promise<void> {
    try {
      const outcomes = await this.options.run(key, batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(outcomes[i]!));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      // Alone, each write succeeds or fails for itself.
      for (const p of batch) {
        await Promise.resolve()
          .then(() => this.options.run(key, [p.item]))
          .then(
            (outcomes) => p.resolve(outcomes[0]!),
            (alone: unknown) => p.reject(alone),
          );
      }
    }
  }
}
