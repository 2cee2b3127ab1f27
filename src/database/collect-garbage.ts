import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Full garbage collections for the one moment tenure knows a lot was let go and nothing else will
 * make V8 look: embedded storage's reopen after migrating (src/database/db.ts) leaves the closed
 * PGlite's WebAssembly memory (128 MB reserved, ~33 MB resident) to the collector, and a server at
 * rest allocates too little for V8 to run a full collection for minutes, at some starts not at all
 * (docs/memory.md, "Embedded storage at start").
 */

/**
 * One full collection, now. Node has no API for it but `--expose-gc`, which only the command line
 * gives the main context: set now, it gives `gc` to contexts made afterwards, as this one-off one.
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
}

/**
 * Collects until `released` (an object nothing should hold any more) is gone: `firstMs` from now,
 * then after twice as long each time, `tries` at most, stopping once V8 reports it collected.
 * Whatever let it go may still hold it for a while (PGlite's close, for a few turns of the event
 * loop after it resolves; a query of the start still settling), so one collection may come early.
 */
export function collectUntilGone(released: object, firstMs: number, tries: number): void {
  let gone = false;
  finalized.register(released, () => {
    gone = true;
  });
  const attempt = (delayMs: number, left: number) => {
    setTimeout(() => {
      if (gone) return;
      collectGarbage();
      if (left > 1) attempt(delayMs * 2, left - 1);
    }, delayMs).unref();
  };
  attempt(firstMs, tries);
}

/** Calls what was registered with an object once V8 has collected the object. */
const finalized = new FinalizationRegistry<() => void>((onGone) => onGone());
