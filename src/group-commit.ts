/**
 * Group commit without a timer: items handed in while a write is under way are written together
 * by the next one, up to `maxBatch` a write, one write at a time. The first item waits one turn of
 * the event loop, so items finishing in that same turn join its batch; an idle caller adds no other
 * latency. `add` resolves with its batch's result once the batch is written, or rejects with the
 * batch's error. The webhook worker's AttemptRecorder and the access workers' CompletionRecorder
 * write their outcomes so.
 */
export class GroupCommit<T, R> {
  private unwrittenItems: { item: T; resolve: (result: R) => void; reject: (err: unknown) => void }[] = [];
  private writing: Promise<void> | null = null;
  /** Items in the write under way. */
  private inWrite = 0;

  constructor(
    private readonly maxBatch: number,
    private readonly writeBatch: (items: T[]) => Promise<R>,
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.unwrittenItems.push({ item, resolve, reject });
      this.writing ??= this.write();
    });
  }

  /** Items handed in and not written yet (waiting, or in the write under way). */
  get unwritten(): number {
    return this.unwrittenItems.length + this.inWrite;
  }

  /** Resolves once everything handed in so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async write(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (this.unwrittenItems.length > 0) {
      const batch = this.unwrittenItems.splice(0, this.maxBatch);
      this.inWrite = batch.length;
      try {
        const result = await this.writeBatch(batch.map((b) => b.item));
        this.inWrite = 0;
        for (const b of batch) b.resolve(result);
      } catch (err) {
        this.inWrite = 0;
        for (const b of batch) b.reject(err);
      }
    }
    this.writing = null;
  }
}
