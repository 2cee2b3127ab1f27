import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Memory of a process read from outside, from /proc: resident memory and its peak
 * (/proc/<pid>/status VmRSS, VmHWM) and where it is (/proc/<pid>/smaps). Nothing is added to the
 * process measured: no inspector, no heap snapshot, no debug endpoint.
 */

const MiB = 1024; // smaps and status count kB

/** Where a process's resident memory is, in MiB. */
export interface MemoryBreakdown {
  rss: number;
  peak: number;
  /** PGlite's WebAssembly memory: its resident part and its size (what it has grown to). 0 without PGlite. */
  wasmRss: number;
  wasmSize: number;
  /** Mapped files: node's binary and the libraries (code and read-only data). */
  files: number;
  /** Every other anonymous mapping: V8's heap, compiled code, malloc's arenas, buffers. */
  otherAnon: number;
}

interface Mapping {
  start: number;
  end: number;
  perm: string;
  name: string;
  rss: number;
}

function mappings(pid: number): Mapping[] {
  const maps: Mapping[] = [];
  let current: Mapping | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      current = { start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perm: head[3]!, name: head[4]!, rss: 0 };
      maps.push(current);
    } else if (line.startsWith('Rss:') && current) {
      current.rss = Number(line.split(/\s+/)[1]);
    }
  }
  return maps;
}

/** VmRSS and VmHWM of `pid`, in MiB; NaN once it has exited. */
export function rssOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: kb('VmRSS') / MiB, peak: kb('VmHWM') / MiB };
  } catch {
    return { rss: Number.NaN, peak: Number.NaN };
  }
}

/**
 * V8 reserves a WebAssembly memory with guard pages: an 8 GiB or larger anonymous reservation whose
 * first part, the memory's current size, is readable and writable, the rest inaccessible. That
 * pair of adjacent mappings is PGlite's heap (tenure has no other WebAssembly).
 */
export function breakdownOf(pid: number): MemoryBreakdown {
  const maps = mappings(pid);
  const { rss, peak } = rssOf(pid);
  let wasmRss = 0;
  let wasmSize = 0;
  const wasm = new Set<Mapping>();
  for (let i = 0; i + 1 < maps.length; i++) {
    const [a, b] = [maps[i]!, maps[i + 1]!];
    if (a.perm === 'rw-p' && a.name === '' && b.perm === '---p' && a.end === b.start && b.end - a.start >= 8 * 2 ** 30) {
      wasm.add(a);
      wasmRss += a.rss / MiB;
      wasmSize += (a.end - a.start) / 2 ** 20;
    }
  }
  const sum = (pick: (m: Mapping) => boolean) => maps.filter(pick).reduce((s, m) => s + m.rss, 0) / MiB;
  return {
    rss,
    peak,
    wasmRss,
    wasmSize,
    files: sum((m) => m.name.startsWith('/')),
    otherAnon: sum((m) => !m.name.startsWith('/') && !wasm.has(m)),
  };
}

/** Resident memory sampled every `everyMs` while `during` runs: the samples, their maximum and the peak (VmHWM) at the end. */
export async function sampled<T>(pid: number, everyMs: number, during: () => Promise<T>): Promise<{ value: T; samples: { t: number; rss: number }[]; max: number; peak: number }> {
  const samples: { t: number; rss: number }[] = [];
  const started = performance.now();
  const take = () => {
    const { rss } = rssOf(pid);
    if (Number.isFinite(rss)) samples.push({ t: (performance.now() - started) / 1000, rss });
  };
  take();
  const timer = setInterval(take, everyMs);
  try {
    const value = await during();
    take();
    return { value, samples, max: Math.max(...samples.map((s) => s.rss)), peak: rssOf(pid).peak };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Mean resident memory over the first and the last window of a run's samples: ten minutes for a run
 * of twenty minutes or more (the hour: its first ten minutes against its last ten), else a tenth.
 */
export function tenths(samples: readonly { t: number; rss: number }[]): { first: number; last: number; windowS: number } {
  const end = samples.at(-1)?.t ?? 0;
  const windowS = end >= 1200 ? 600 : end / 10;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    first: mean(samples.filter((s) => s.t <= windowS).map((s) => s.rss)),
    last: mean(samples.filter((s) => s.t >= end - windowS).map((s) => s.rss)),
    windowS,
  };
}

/**
 * Runs `node <args>` to its end with `env`, sampling its memory every 100 ms (the last VmHWM read
 * before it exits is its peak). Rejects when it exits with a code other than 0 or 2.
 */
export function runMeasured(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ peak: number; seconds: number; output: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let peak = 0;
    child.stdout.on('data', (d: Buffer) => void (output = (output + d.toString()).slice(-4000)));
    child.stderr.on('data', (d: Buffer) => void (output = (output + d.toString()).slice(-4000)));
    const timer = setInterval(() => {
      const read = rssOf(child.pid!).peak;
      if (Number.isFinite(read)) peak = Math.max(peak, read);
    }, 100);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearInterval(timer);
      if (code === 0 || code === 2) resolve({ peak, seconds: (performance.now() - started) / 1000, output });
      else reject(new Error(`node ${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}
