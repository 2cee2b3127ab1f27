/**
 * The line each user id of an import was first seen on (membership-import.ts reports a later one
 * as a duplicate of it), kept compactly: an import of 1,000,000 rows remembers 1,000,000 ids.
 *
 * In a Map of strings that took ~60 MiB of V8's heap and, with the garbage collector's headroom,
 * ~120 MiB of resident memory (docs/memory.md). Here an id of at most 19 digits without a leading
 * zero (every Discord and Telegram id) is stored exactly as two numbers, its leading digits and its
 * last nine, in an open-addressing table of typed arrays: 16 bytes a slot, outside the heap, so
 * 1,000,000 ids take 32 MiB. Any other id (leading zeros, 20 to 32 digits) goes to a Map.
 */
export class UserIdLines {
  private high = new Float64Array(0);
  private low = new Uint32Array(0);
  /** The line of each slot; 0: empty (lines count from 1). */
  private lines = new Uint32Array(0);
  private used = 0;
  private readonly others = new Map<string, number>();

  constructor(initialSlots = 1024) {
    this.allocate(2 ** Math.ceil(Math.log2(Math.max(16, initialSlots))));
  }

  get size(): number {
    return this.used + this.others.size;
  }

  /** The line `userId` was first seen on, if it was. */
  get(userId: string): number | undefined {
    const key = keyOf(userId);
    if (key === null) return this.others.get(userId);
    const slot = this.find(key[0], key[1]);
    return this.lines[slot] === 0 ? undefined : this.lines[slot];
  }

  has(userId: string): boolean {
    return this.get(userId) !== undefined;
  }

  /** Records `line` for `userId`, replacing what was recorded (a Map's `set`). */
  set(userId: string, line: number): this {
    if (!Number.isInteger(line) || line < 1 || line > 0xffffffff) throw new RangeError(`line must be a whole number from 1 to ${0xffffffff}, not ${line}`);
    const key = keyOf(userId);
    if (key === null) {
      this.others.set(userId, line);
      return this;
    }
    let slot = this.find(key[0], key[1]);
    if (this.lines[slot] === 0) {
      // Kept at most three quarters full, so a probe finds an empty slot soon.
      if ((this.used + 1) * 4 > this.lines.length * 3) {
        this.grow();
        slot = this.find(key[0], key[1]);
      }
      this.used++;
      this.high[slot] = key[0];
      this.low[slot] = key[1];
    }
    this.lines[slot] = line;
    return this;
  }

  /** The slot holding the key, or the empty slot where it would go (linear probing). */
  private find(high: number, low: number): number {
    const mask = this.lines.length - 1;
    let slot = hash(high, low) & mask;
    while (this.lines[slot] !== 0 && (this.high[slot] !== high || this.low[slot] !== low)) slot = (slot + 1) & mask;
    return slot;
  }

  private allocate(slots: number): void {
    this.high = new Float64Array(slots);
    this.low = new Uint32Array(slots);
    this.lines = new Uint32Array(slots);
  }

  private grow(): void {
    const [high, low, lines] = [this.high, this.low, this.lines];
    this.allocate(lines.length * 2);
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] === 0) continue;
      const slot = this.find(high[i]!, low[i]!);
      this.high[slot] = high[i]!;
      this.low[slot] = low[i]!;
      this.lines[slot] = lines[i]!;
    }
  }
}

/**
 * An id of 1 to 19 digits without a leading zero ("0" itself included) as [its digits before the
 * last nine, its last nine]: both exact as numbers (below 10^10 and 10^9), and no two such ids
 * give the same pair. Null for any other string.
 */
function keyOf(userId: string): [number, number] | null {
  const n = userId.length;
  if (n === 0 || n > 19 || (userId.charCodeAt(0) === 48 && n > 1)) return null;
  for (let i = 0; i < n; i++) {
    const c = userId.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  return n <= 9 ? [0, Number(userId)] : [Number(userId.slice(0, n - 9)), Number(userId.slice(n - 9))];
}

function hash(high: number, low: number): number {
  let h = Math.imul(low ^ 0x9e3779b9, 0x85ebca6b);
  h ^= Math.imul((high >>> 0) ^ Math.floor(high / 0x100000000), 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  return (h ^ (h >>> 15)) >>> 0;
}
