/**
 * The pure rules of reminders before a membership ends (docs/lifecycle.md): what an offset is, when
 * quiet hours end in the project's time zone (what the message says: member-messages.ts). The SQL side of "due"
 * (src/store/reminders.store.ts) reads offsets through `offsetSecondsSql`, the twin of `offsetSeconds`.
 */

/** An offset before the end: whole days or hours (`7d`, `3d`, `1d`, `12h`). */
const OFFSET = /^([1-9][0-9]{0,3})([dh])$/;
/** The longest offset: a reminder further ahead is not a reminder. */
const MAX_OFFSET_SECONDS = 90 * 86_400;
/** Offsets a project (or plan) may keep: each is one message per membership period. */
export const MAX_OFFSETS = 10;

/**
 * The reminders' lanes of each offset (src/store/reminders.store.ts): written side by side. Fixed:
 * a membership's lane is its id's last byte modulo this, and a lane's cursor only ever meets its
 * own lane's rows, so the count cannot change under existing cursors.
 */
export const REMINDER_LANES = 4;

/** Seconds of a valid offset, else null. */
export function offsetSeconds(offset: string): number | null {
  const m = OFFSET.exec(offset);
  if (!m) return null;
  const seconds = Number(m[1]) * (m[2] === 'd' ? 86_400 : 3_600);
  return seconds <= MAX_OFFSET_SECONDS ? seconds : null;
}

/**
 * The offsets to store: each valid and distinct by duration (`24h` and `1d` are one), furthest
 * first; or the sentence naming what is wrong.
 */
export function parseOffsets(key: string, v: unknown): { ok: true; value: string[] } | { ok: false; message: string } {
  const wrong = { ok: false as const, message: `${key} must be a list of at most ${MAX_OFFSETS} durations before the end, in days or hours from 1h to 90d (["3d", "1d", "12h"]), or [] for none` };
  if (!Array.isArray(v) || v.length > MAX_OFFSETS) return wrong;
  const bySeconds = new Map<number, string>();
  for (const item of v) {
    const seconds = typeof item === 'string' ? offsetSeconds(item) : null;
    if (seconds === null) return wrong;
    if (!bySeconds.has(seconds)) bySeconds.set(seconds, item as string);
  }
  return { ok: true, value: [...bySeconds.entries()].sort((a, b) => b[0] - a[0]).map(([, o]) => o) };
}

/** Quiet hours `HH:MM-HH:MM` (may cross midnight): minutes of the day where they start and end. */
export interface QuietHours {
  start: number;
  end: number;
}

export function parseQuietHours(v: string): QuietHours | null {
  const m = /^([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-3]):([0-5][0-9])$/.exec(v);
  if (!m) return null;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  return start === end ? null : { start, end };
}

const partsFormats = new Map<string, Intl.DateTimeFormat>();
function partsFormat(timeZone: string): Intl.DateTimeFormat {
  let f = partsFormats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    partsFormats.set(timeZone, f);
  }
  return f;
}

/** The wall clock of `t` in `timeZone`, as if it were UTC (epoch ms, whole seconds). */
function wallOf(t: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of partsFormat(timeZone).formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
}

/** The zone's offset from UTC at instant `t`, in ms. */
const offsetAt = (t: number, timeZone: string): number => wallOf(t, timeZone) - Math.floor(t / 1000) * 1000;

/**
 * The first instant whose wall clock in `timeZone` reads `wall` or later: the instant itself when
 * that time exists once, the earlier one when it exists twice (the autumn hour), and the end of the
 * gap when the spring change skips it.
 */
export function instantOfWall(wall: number, timeZone: string): number {
  const early = wall - Math.max(offsetAt(wall - 86_400_000, timeZone), offsetAt(wall + 86_400_000, timeZone), offsetAt(wall, timeZone));
  const late = wall - Math.min(offsetAt(wall - 86_400_000, timeZone), offsetAt(wall + 86_400_000, timeZone), offsetAt(wall, timeZone));
  // The wall clock only moves forward or jumps back by the change: the first instant reading
  // `wall` or later lies in [early, late]; a minute's search over it finds the change exactly.
  let lo = early;
  let hi = late;
  if (wallOf(lo, timeZone) >= wall) return lo;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (wallOf(mid, timeZone) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * When the quiet hours holding `now` end (the first instant at or after their end time in the
 * project's zone), or null when `now` is outside them.
 */
export function quietHoursEnd(now: Date, quiet: QuietHours, timeZone: string): Date | null {
  const wall = wallOf(now.getTime(), timeZone);
  const day = Math.floor(wall / 86_400_000) * 86_400_000;
  const minute = Math.floor((wall - day) / 60_000);
  const crosses = quiet.start > quiet.end;
  const inside = crosses ? minute >= quiet.start || minute < quiet.end : minute >= quiet.start && minute < quiet.end;
  if (!inside) return null;
  const endDay = crosses && minute >= quiet.start ? day + 86_400_000 : day;
  return new Date(instantOfWall(endDay + quiet.end * 60_000, timeZone));
}
