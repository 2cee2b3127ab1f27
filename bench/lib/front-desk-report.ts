import { availableParallelism } from 'node:os';
import type { Ratio } from './phases.js';
import type { PayFigures } from './pay-opens.js';

/** What bench/front-desk.ts reports: its targets, its RESULTS.md section and its ratios. */

export const INTERACTION_P99_TARGET_MS = 300;
export const PAY_P99_TARGET_MS = 20;
const JOIN_TARGET = 'p99 < 2 s';
export const PAY_WARMUP = 20;
/** How long the follow-up edits are waited for after the last interaction. */
export const EDITS_WAIT_MS = 30_000;

/**
 * Where an open's time went, profiled by hand (`node --cpu-prof` on the built server, opens only,
 * one at a time, links made by another process first): stated with the commits it led to.
 */
const PROFILE = [
  "Where an open's time went (`node --cpu-prof` on the built server, 2026-11-28, on 69f14cf; a link's first open):",
  '',
  '- **the plan read counted members**: checkout read the whole plan view, whose targets count their active members (DISTINCT over',
  '  memberships). With 20,000 members that was ~14 ms of PostgreSQL CPU an open (17.1 → 3.4 ms an open, p50 29 → 9 ms one at a time,',
  "  side by side), the largest cost at a real community's size; the bench had no members before, so it never showed. Now a",
  "  prepared read of the plan's terms (no targets), for checkout and pay links alike (4681643).",
  "- **a stripe-node client per call**: its constructor makes ~100 resource objects, about a tenth of the server's CPU an open;",
  '  now one client per secret key, at most 100 kept (32b896f).',
  "- an `Intl.NumberFormat` per checkout for the currency's digits (~0.1 ms): now read once per currency (9a90850).",
  "- six round trips to PostgreSQL on a first open (the link; then checkout's plan, ban, automatic coupons, merchant account; the",
  "  session kept), unnamed statements parsed and planned each time: the link's read and write and the plan's terms are now named",
  "  prepared statements (9a90850, 4681643). The four checkout reads could be one statement; they are shared with `POST /checkout`: left.",
  "- not where the time goes: opening the sealed secret key (AES-GCM, ~0.05 ms), eta (a 303 renders no template), helmet's headers",
  "  (~0.07 ms). stripe-node's own work per request (form encoding, a call-site stack captured per call, its user-agent header, ~0.4 ms): left.",
];

/** The settings a report states. */
export interface ReportSettings {
  seconds: number;
  rate: number;
  links: number;
  concurrency: number;
  payRate: number;
  members: number;
}

export interface InteractionFigures {
  sent: number;
  seconds: number;
  achievedRate: number;
  failed: number;
  all: { p50: number; p99: number; max: number };
  subscribe: { p50: number; p99: number };
  button: { p50: number; p99: number };
  edits: { n: number; missing: number; p50: number; p99: number; max: number };
}

/** One server build (BENCH_FRONT_DESK_BUILDS): its label and `main.js`. The first is the one the section reports. */
export interface Build {
  label: string;
  main: string;
}

export interface PayRun {
  build: string;
  /** One at a time: tenure's time with no queue in front of it (no target). */
  serial: PayFigures;
  /** An open loop at `payRate`/s: the target is judged on this one. */
  paced: PayFigures;
  /** `concurrency` in flight, as fast as the host goes (shown beside it, with its verdict). */
  closed: PayFigures;
}

export interface Measured {
  s: ReportSettings;
  interactions: InteractionFigures | null;
  pay: PayRun[];
  load: { before: number[]; after: number[] };
}

export const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : String(n));
const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');

export function ratiosOf(m: Measured): Ratio[] {
  const i = m.interactions;
  const p = m.pay[0]!;
  return [
    ...(i
      ? [
          {
            name: `front desk: Discord interaction answered, p99 (${m.s.rate}/s for ${m.s.seconds} s)`,
            value: i.all.p99,
            target: `< ${INTERACTION_P99_TARGET_MS} ms`,
            met: i.all.p99 < INTERACTION_P99_TARGET_MS && i.failed === 0 && i.edits.missing === 0,
          },
        ]
      : []),
    {
      name: `front desk: GET /pay/{id} p99 beyond the fake Stripe's own time (${m.s.payRate} opens/s)`,
      value: p.paced.beyond.p99,
      target: `< ${PAY_P99_TARGET_MS} ms`,
      met: p.paced.beyond.p99 < PAY_P99_TARGET_MS,
    },
  ];
}

export const shapeOf = (f: PayFigures) => (f.shape.kind === 'open' ? `${f.shape.rate}/s (open loop)` : f.shape.concurrency === 1 ? 'one at a time' : `${f.shape.concurrency} in flight (closed loop)`);

function payRows(r: PayRun): string[] {
  const row = (f: PayFigures, judged: boolean) => {
    const met = f.beyond.p99 < PAY_P99_TARGET_MS;
    const result = judged ? verdict(met) : f.shape.kind === 'closed' && f.shape.concurrency > 1 ? `${verdict(met)} (not the judged figure)` : 'shown';
    return `| ${shapeOf(f)} | ${f.links} | ${f.perSecond.toFixed(0)} | ${ms(f.total.p50)} / ${ms(f.total.p99)} | ${ms(f.stripe.p50)} / ${ms(f.stripe.p99)} | ${ms(f.beyond.p50)} / **${ms(f.beyond.p99)}** | ${ms(f.server.p50)} / ${ms(f.server.p99)} | ${result} |`;
  };
  return [
    "| opens | n | opens/s | whole p50 / p99 ms | fake Stripe's create p50 / p99 | tenure's own (whole − create) p50 / p99 | server's logged time − create p50 / p99 | p99 < 20 ms |",
    '|---|---:|---:|---:|---:|---:|---:|---|',
    row(r.paced, true),
    row(r.closed, false),
    row(r.serial, false),
  ];
}

function cpuRows(runs: PayRun[]): string[] {
  return [
    '| build | opens | opens/s | tenure server CPU ms | its PostgreSQL backends CPU ms | every `postgres` process CPU ms (the shared server) | bench process CPU ms (client, proxy, both fakes) |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...runs.flatMap((r) =>
      [r.paced, r.closed, r.serial].map(
        (f) => `| ${r.build} | ${shapeOf(f)} | ${f.perSecond.toFixed(0)} | ${f.serverCpuMs.toFixed(2)} | ${f.backendsCpuMs.toFixed(2)} | ${f.databaseCpuMs.toFixed(2)} | ${f.benchCpuMs.toFixed(2)} |`,
      ),
    ),
  ];
}

function comparisonRows(runs: PayRun[]): string[] {
  const cell = (f: PayFigures) => `${ms(f.beyond.p50)} / ${ms(f.beyond.p99)}`;
  return [
    `| build | ${runs[0]!.paced.shape.kind === 'open' ? shapeOf(runs[0]!.paced) : ''} own p50 / p99 | ${shapeOf(runs[0]!.closed)} own p50 / p99 | one at a time own p50 / p99 | server's logged − create p99, one at a time | server CPU ms an open (closed loop) | its PostgreSQL backends CPU ms |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...runs.map((r) => `| ${r.build} | ${cell(r.paced)} | ${cell(r.closed)} | ${cell(r.serial)} | ${ms(r.serial.server.p99)} | ${r.closed.serverCpuMs.toFixed(2)} | ${r.closed.backendsCpuMs.toFixed(2)} |`),
  ];
}

export function markdownOf(m: Measured): string {
  const { interactions: i, s } = m;
  const p = m.pay[0]!;
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const busy = Math.max(...m.load.before.slice(0, 1), ...m.load.after.slice(0, 1)) > 1.5;
  const other = m.pay.reduce((n, r) => n + r.paced.otherStripeCalls + r.closed.otherStripeCalls + r.serial.otherStripeCalls, 0);
  return [
    '## Front desk: Discord interactions and pay links',
    '',
    '- the real server (`node dist/main.js`, defaults, LOG_LEVEL info) on PostgreSQL (a database of its own), pointed at the fake Discord and',
    '  the fake Stripe (test/support) running in the bench process on loopback; the bot connected through the API (the fake serves',
    '  `GET /applications/@me` with the public key of a key pair it makes in this process, which signs every interaction)',
    `- the community: three plans granting one Discord role, ${s.members.toLocaleString('en')} active members on them (a plan's target counts its members, so a read that counts them costs with the community's size)`,
    ...(i
      ? [
          `- interactions: ${i.sent} signed interactions sent at a steady ${s.rate}/s for ${s.seconds} s (an open loop; achieved ${i.achievedRate.toFixed(1)}/s),`,
          '  alternately `/subscribe` (three plans as buttons, answered at once, type 4) and a press of a plan button (answered deferred, type 5,',
          '  then the pay link made and the answer edited through the follow-up webhook), each from a member of its own; one second of',
          '  the same load first, not counted. Answer: from sending to the whole HTTP answer read. Edit: from sending to the edit arriving at the fake.',
        ]
      : []),
    `- pay links: made through \`POST …/pay-links\`, each opened once (\`redirect: 'manual'\`: the 303 to the fake's checkout page), in three`,
    `  shapes: ${s.payRate} opens a second on a fixed schedule (an open loop, ${s.links} opens), ${s.concurrency} in flight as fast as the host goes (a closed`,
    `  loop, ${s.links} opens), and one at a time; each after ${PAY_WARMUP} warm-up opens, not counted. Stripe's own time is timed per request by a`,
    '  proxy between tenure and the fake Stripe (bench/lib/timing-proxy.ts) and matched by the session\'s `metadata[user_id]`.',
    "  tenure's own time is the open's (at the bench's client) minus its session create's: the loopback hops and the bench's own event",
    "  loop count as tenure's (conservative). Beside it, the server's own logged `responseTime` (matched by `X-Request-Id`) minus the create.",
    `- **the target (p99 < ${PAY_P99_TARGET_MS} ms) is judged on the open loop at ${s.payRate}/s**: it is tenure's time at an arrival rate a busy community`,
    `  sends, where the closed loop at ${s.concurrency} in flight drives the host to saturation (server, PostgreSQL and the bench with both fakes on the`,
    `  same ${availableParallelism()} cores), so its p99 is mostly the queue for the host's cores (Little's law: ${s.concurrency} ÷ opens/s). The closed loop is shown with its own verdict.`,
    `- load average (1 / 5 / 15 min) before: ${load(m.load.before)}, after: ${load(m.load.after)} on ${availableParallelism()} cores${busy ? ': **the host was busy** (other runs shared it), so the tails are longer than on a quiet machine' : ''}`,
    '',
    ...(i
      ? [
          '| what | n | p50 ms | p99 ms | max ms | target | result |',
          '|---|---:|---:|---:|---:|---|---|',
          `| interaction answered (all) | ${i.sent} | ${ms(i.all.p50)} | **${ms(i.all.p99)}** | ${ms(i.all.max)} | p99 < ${INTERACTION_P99_TARGET_MS} ms | ${verdict(i.all.p99 < INTERACTION_P99_TARGET_MS && i.failed === 0)} |`,
          `| … \`/subscribe\` (type 4) | ${Math.ceil(i.sent / 2)} | ${ms(i.subscribe.p50)} | ${ms(i.subscribe.p99)} | | | |`,
          `| … plan button (type 5, deferred) | ${Math.floor(i.sent / 2)} | ${ms(i.button.p50)} | ${ms(i.button.p99)} | | | |`,
          `| plan button → follow-up edit at the fake Discord | ${i.edits.n} | ${ms(i.edits.p50)} | ${ms(i.edits.p99)} | ${ms(i.edits.max)} | none (reported) | |`,
          `| a member joining → role granted | — | — | — | — | ${JOIN_TARGET} | not measured |`,
          '',
          `Interactions answered otherwise than expected (not 200, or not type 4 / 5): ${i.failed}; button presses whose edit never came within`,
          `${EDITS_WAIT_MS / 1000} s: ${i.edits.missing}.`,
          '',
        ]
      : []),
    `\`GET /pay/{id}\` (${p.build}):`,
    '',
    ...payRows(p),
    '',
    `Stripe calls during the opens other than the session creates: ${other}.`,
    '',
    "Where a pay link's time goes (CPU per open, user + system):",
    '',
    ...cpuRows(m.pay),
    ...(m.pay.length > 1 ? ['', "The builds side by side in this run (tenure's own ms, whole − create; same host, same minutes):", '', ...comparisonRows(m.pay)] : []),
    '',
    ...PROFILE,
    '',
    '**Not measured: a member joining → role granted** (target p99 < 2 s). It needs a gateway connection per bot (`@discordjs/ws`,',
    'the GUILD_MEMBERS intent, reacting to GUILD_MEMBER_ADD), which tenure does not have yet: today a member who',
    'joins after paying gets the role at the next drift check (`TENURE_ACCESS_RECONCILE_SECONDS`, 10 minutes by default), so there',
    'is nothing of seconds to time. Measure it here once the gateway lands (the fake Discord needs a gateway for it too).',
  ].join('\n');
}

