import type { MoveInProgress } from '../domain/moving-in/move-in.js';

/**
 * Progress of `import botsubscription` on stderr: what is being read, how many of the source's
 * pages are read, and when it should be done. The source's rate limit sets the pace (a page of 100
 * memberships per request, 100 requests a minute), so the ETA is the pages left at the pace seen
 * so far, never faster than the limit allows. Throttled like the CSV import's progress: one line
 * rewritten in place on a terminal, a line per update elsewhere.
 */

export interface MoveInProgressOptions {
  sink: { write(text: string): unknown };
  inPlace: boolean;
  /** The source's requests a minute: the fastest the rest can go. */
  perMinute: number;
  /** 429s the source answered so far. */
  rateLimited: () => number;
  intervalMs?: number;
  now?: () => number;
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export class MoveInProgressPrinter {
  private readonly started: number;
  private lastPrint = -Infinity;
  private last: MoveInProgress | null = null;
  private readonly now: () => number;

  constructor(private readonly o: MoveInProgressOptions) {
    this.now = o.now ?? Date.now;
    this.started = this.now();
  }

  update(p: MoveInProgress): void {
    this.last = p;
    if (this.now() - this.lastPrint < (this.o.intervalMs ?? 1_000)) return;
    this.print(this.line(p));
  }

  /** The last line, whatever the interval, ending the in-place line. */
  finish(): void {
    if (this.last === null) return;
    const elapsed = (this.now() - this.started) / 1000;
    this.print(`import botsubscription: ${this.last.reads} reads of the source, done in ${duration(elapsed)}`, true);
  }

  line(p: MoveInProgress): string {
    const elapsed = (this.now() - this.started) / 1000;
    const left = Math.max(0, p.readsTotal - p.reads);
    const pace = Math.max(elapsed / Math.max(1, p.reads), 60 / this.o.perMinute);
    const waits = this.o.rateLimited();
    const limited = waits > 0 ? `, ${waits} waited out (429)` : '';
    return `import botsubscription: ${p.step}, ${p.reads} of ${p.readsTotal} reads${limited}, ETA ${duration(left * pace)}`;
  }

  private print(text: string, done = false): void {
    this.lastPrint = this.now();
    this.o.sink.write(this.o.inPlace ? `\r${text}\x1b[K${done ? '\n' : ''}` : `${text}\n`);
  }
}
