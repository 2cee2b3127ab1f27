/**
 * Progress of `membership import` on stderr: rows read, rows per second, how much of the file is
 * read and when it should be done. The ETA comes from bytes, not rows, since the file's size is
 * known up front and its row count is not. Updates are throttled; on a terminal one line is
 * rewritten in place, elsewhere (--progress into a log) each update is its own line.
 */

export interface ProgressSink {
  write(text: string): unknown;
}

export interface ProgressOptions {
  totalBytes: number;
  /** Bytes of the file read so far. */
  bytesRead: () => number;
  sink: ProgressSink;
  /** Rewrite one line in place (a terminal) rather than print a line per update. */
  inPlace: boolean;
  intervalMs?: number;
  now?: () => number;
}

const number = new Intl.NumberFormat('en-US');

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function size(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export class ImportProgress {
  private readonly started: number;
  private lastPrint: number;
  private readonly now: () => number;
  private readonly intervalMs: number;

  constructor(private readonly o: ProgressOptions) {
    this.now = o.now ?? Date.now;
    this.intervalMs = o.intervalMs ?? 1_000;
    this.started = this.now();
    this.lastPrint = this.started;
  }

  /** After each batch: prints when the last print is at least the interval old. */
  update(rows: number, inserted: number): void {
    if (this.now() - this.lastPrint < this.intervalMs) return;
    this.print(rows, inserted, false);
  }

  /** Once at the end, whatever the interval: the final count, the rows rejected, and the whole run's rate. */
  finish(rows: number, inserted: number, rejected = 0): void {
    this.print(rows, inserted, true, rejected);
  }

  line(rows: number, inserted: number, done: boolean, rejected = 0): string {
    const elapsed = Math.max(0.001, (this.now() - this.started) / 1000);
    const read = done ? this.o.totalBytes : Math.min(this.o.bytesRead(), this.o.totalBytes);
    const fraction = this.o.totalBytes === 0 ? 1 : read / this.o.totalBytes;
    const rate = Math.round(rows / elapsed);
    const head = `import: ${number.format(rows)} rows read, ${number.format(inserted)} inserted, ${number.format(rate)} rows/s`;
    const where = `${Math.floor(fraction * 100)}% of ${size(this.o.totalBytes)}`;
    // Done says what became of the rows, so a run that rejected some never reads as a clean 100%.
    const tail = done
      ? `${rejected > 0 ? `${number.format(rejected)} rejected, ` : ''}done in ${duration(elapsed)}`
      : `ETA ${duration(fraction > 0 ? (elapsed * (1 - fraction)) / fraction : Infinity)}`;
    return `${head}, ${where}, ${tail}`;
  }

  private print(rows: number, inserted: number, done: boolean, rejected = 0): void {
    this.lastPrint = this.now();
    const text = this.line(rows, inserted, done, rejected);
    // \r and "erase to end of line" redraw the same terminal line.
    this.o.sink.write(this.o.inPlace ? `\r${text}\x1b[K${done ? '\n' : ''}` : `${text}\n`);
  }
}
