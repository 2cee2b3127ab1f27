import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { addBot, addTelegramBot } from '../support/bots.js';
import { fakeSnowflake } from '../support/fake-discord-model.js';
import { useHarness, userId, type Harness, type Tenant } from '../support/harness.js';
import { connectStripe, newWebhookSecret } from '../support/payments.js';

/**
 * Every curl example in the README and docs/ works when pasted today: each `curl` command in a
 * fenced `sh` block, and each `METHOD /path` request (with its JSON body) of an `http` block, is run, in the order of its file, against the real app with a project and key
 * of the file's own (docs/testing.md, "Examples in the docs" has the convention):
 * - `$TENURE`, `$BASE`, `$P` (the project's base), a `http://127.0.0.1:…` or `http://localhost:…`
 *   address, `$PROJECT`, `$KEY` and `$TENURE_KEY` stand for the reader's server, project and key;
 * - `<…>` and a value ending in `…` are the reader's to fill in: the test fills them with a value
 *   of that kind (a bot token its fake Discord or Telegram knows, a Stripe key its fake Stripe
 *   knows, the id of the plan, target or webhook made by an earlier example of the file);
 * - `NAME=$(curl … | id)` keeps the answer's id for `$NAME` in later commands;
 * - a comment above a command naming a 4xx status says the example shows that error; otherwise the
 *   answer must be a success;
 * - a comment after a command showing an answer (`# {…}` or `# data: {…}`) names fields the answer
 *   must have.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FILES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** One runnable example: a curl command, or an assignment of an id from one. */
interface Example {
  file: string;
  line: number;
  command: string;
  /** A request of an `http` block instead of a curl command. */
  http?: { method: string; path: string; body: string };
  /** The variable `NAME=$(curl … | id)` assigns, if any. */
  assigns: string | null;
  /** The 4xx status the comment above it names, or null for a success. */
  expectStatus: number | null;
  /** Field names the comment after it shows in the answer. */
  shows: string[];
}

/** The curl commands of `text`'s `sh` blocks, their continuation lines joined. */
function examplesOf(file: string, text: string): Example[] {
  const out: Example[] = [];
  const lines = text.split('\n');
  let inSh = false;
  let inHttp = false;
  let comment = '';
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw.startsWith('```')) {
      inSh = !inSh && !inHttp && raw === '```sh';
      inHttp = !inHttp && !inSh && raw === '```http';
      comment = '';
      continue;
    }
    if (inHttp) {
      // `METHOD /path`, then its JSON body (if any) up to the next request line.
      const request = /^(GET|POST|PUT|PATCH|DELETE)\s+(\/\S+)$/.exec(raw);
      if (request) out.push({ file, line: i + 1, command: '', http: { method: request[1]!, path: request[2]!, body: '' }, assigns: null, expectStatus: null, shows: [] });
      else if (out.at(-1)?.http) out.at(-1)!.http!.body += raw;
      continue;
    }
    if (!inSh) continue;
    if (raw.startsWith('#')) {
      const shown = out.at(-1);
      // A shown answer right after a command: `# {…` or `# data: …`, possibly over several lines.
      if (shown && shown.line >= i - 3 && /^#\s*(\{|data: |\s+")/.test(raw)) {
        shown.shows.push(...[...raw.matchAll(/"(\w+)"\s*:/g)].map((m) => m[1]!));
        continue;
      }
      comment = raw;
      continue;
    }
    let command = raw;
    const start = i;
    // A continued line, or a quoted body running over several lines.
    const open = (c: string) => (c.match(/'/g) ?? []).length % 2 === 1;
    while ((command.endsWith('\\') || open(command)) && i + 1 < lines.length) {
      command = command.endsWith('\\') ? command.slice(0, -1) + ' ' + lines[++i]!.trim() : command + '\n' + lines[++i]!;
    }
    const assignment = /^(\w+)=\$\((curl .*)\|\s*id\)$/.exec(command);
    if (!assignment && !command.startsWith('curl ')) continue;
    const status = /\b(4\d\d)\b/.exec(comment);
    out.push({
      file,
      line: start + 1,
      command: assignment ? assignment[2]!.trim() : command,
      assigns: assignment ? assignment[1]! : null,
      expectStatus: status ? Number(status[1]) : null,
      shows: [],
    });
  }
  return out;
}

/** Shell words, as sh splits them: quotes removed, `$NAME` expanded outside single quotes. */
function words(command: string, vars: (name: string) => string): string[] {
  const out: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === ' ' || c === '\t') {
      if (word !== null) out.push(word);
      word = null;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unclosed ' in: ${command}`);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; command[i] !== '"'; i++) {
        if (i >= command.length) throw new Error(`unclosed " in: ${command}`);
        if (command[i] === '\\') word += command[++i];
        else if (command[i] === '$') {
          const name = /^\w+/.exec(command.slice(i + 1))![0];
          word += vars(name);
          i += name.length;
        } else word += command[i];
      }
    } else if (c === '$') {
      const name = /^\w+/.exec(command.slice(i + 1))![0];
      word = (word ?? '') + vars(name);
      i += name.length;
    } else word = (word ?? '') + c;
  }
  if (word !== null) out.push(word);
  return out;
}

/** What the examples of one file share: its project and key, and the ids its examples made. */
class Session {
  readonly ids = new Map<string, string>();
  readonly vars = new Map<string, string>();
  /** The member an `http` example's `{user_id}` names. */
  readonly member = userId();
  private plan: string | null = null;
  constructor(
    private readonly h: Harness,
    readonly t: Tenant,
  ) {}

  variable(name: string): string {
    if (name === 'TENURE' || name === 'BASE') return 'http://127.0.0.1:3000';
    if (name === 'P') return `http://127.0.0.1:3000${this.t.base}`;
    if (name === 'PROJECT') return this.t.projectId;
    if (name === 'KEY' || name === 'TENURE_KEY') return this.t.key;
    const value = this.vars.get(name);
    if (value === undefined) throw new Error(`$${name} is not set by an earlier example`);
    return value;
  }

  /** The reader's part of a value (`<…>`, or ending in `…`), filled with one of that kind. */
  async fill(placeholder: string, field: string, url: string): Promise<string> {
    const name = placeholder.replace(/[<>…]/g, '').trim().replace(/ /g, '_');
    // An id an earlier example made: by the placeholder's name, or by the field for the ids of
    // objects the examples make (never an external_id or a user_id: those are the reader's own).
    const id = this.ids.get(name) ?? (/^(plan|target|webhook|coupon|merchant_account)_id$/.test(field) ? this.ids.get(field) : undefined);
    if (id) return id;
    if (field === 'bot_token' || name === 'your_bot_token') {
      return url.includes('/telegram') ? addTelegramBot(this.h.telegram).token : addBot(this.h.discord).token;
    }
    if (field === 'secret_key') return this.h.stripe.world.addAccount().secretKey;
    if (field === 'webhook_secret') return newWebhookSecret();
    if (field === 'client_secret') return 'A'.repeat(32);
    if (name === 'discord_user_id' || field === 'user_id') return userId();
    if (/^(guild|role|channel)_id$/.test(name)) return fakeSnowflake();
    if (name === 'project_id') return this.t.projectId;
    if (name === 'plan_id' || field === 'plan_id') return this.anyPlan();
    throw new Error(`no value for the placeholder ${placeholder} (field ${field || '-'})`);
  }

  /** A plan for examples that take one made elsewhere in the docs (`$PLAN`, `<plan_id>`). */
  async anyPlan(): Promise<string> {
    if (this.plan) return this.plan;
    const res = await this.t.request({
      method: 'POST',
      url: `${this.t.base}/plans`,
      payload: { plan_name: 'Gold', plan_price: '9.99', plan_currency: 'USD', plan_duration: '1 month' },
    });
    expect(res.statusCode, res.body).toBe(201);
    this.plan = res.json().data.plan_id as string;
    // Sellable, as the examples that take a plan from elsewhere assume: Stripe connected.
    if (!this.ids.has('merchant_account_id')) await connectStripe(this.h, this.t);
    return this.plan;
  }

  /** Keeps the ids an answer shows, for the placeholders of later examples. */
  remember(url: string, res: LightMyRequestResponse): void {
    if (res.statusCode >= 300 || !res.body.startsWith('{')) return;
    const data = res.json().data as unknown;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return;
    for (const [k, v] of Object.entries(data)) if (k.endsWith('_id') && typeof v === 'string') this.ids.set(k, v);
    const kind = /\/webhooks$/.test(url) ? 'webhooks' : null;
    const id = (data as { id?: unknown }).id;
    if (kind === 'webhooks' && typeof id === 'string') this.ids.set('webhook_id', id);
  }
}

/** Replaces the placeholders in a URL and in a JSON body's string values. */
async function filled(s: Session, url: string, body: string | null): Promise<{ url: string; body: string | null }> {
  let u = url;
  for (const m of url.match(/<[^>]+>/g) ?? []) u = u.replace(m, await s.fill(m, '', url));
  if (body === null) return { url: u, body };
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const walk = async (o: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'string' && (v.includes('…') || /^<.+>$/.test(v))) o[k] = await s.fill(v, k, u);
      else if (v && typeof v === 'object' && !Array.isArray(v)) await walk(v as Record<string, unknown>);
    }
  };
  await walk(parsed);
  return { url: u, body: JSON.stringify(parsed) };
}

/** Sends one example's curl command to the app, as curl would send it. */
async function run(s: Session, h: Harness, ex: Example): Promise<{ url: string; res: LightMyRequestResponse }> {
  if (ex.http) {
    // `{name}` in the path: the project, a member, or an id an earlier example made.
    let url = ex.http.path.replace('{project_id}', s.t.projectId).replace('{user_id}', s.member);
    for (const m of url.match(/\{\w+\}/g) ?? []) url = url.replace(m, await s.fill(m.slice(1, -1), '', url));
    const f = await filled(s, url, ex.http.body === '' ? null : ex.http.body);
    const headers = { ...s.t.headers, ...(f.body === null ? {} : { 'content-type': 'application/json' }) };
    const res = await h.app.inject({ method: ex.http.method as 'GET', url: f.url, headers, ...(f.body === null ? {} : { payload: f.body }) });
    return { url: f.url, res };
  }
  if (/\$PLAN\b/.test(ex.command) && !s.vars.has('PLAN')) s.vars.set('PLAN', s.ids.get('plan_id') ?? (await s.anyPlan()));
  const argv = words(ex.command, (name) => s.variable(name));
  let method: string | null = null;
  let body: string | null = null;
  let url: string | null = null;
  const headers: Record<string, string> = {};
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-s' || a === '-i' || a === '-sS' || a === '-N') continue;
    else if (a === '-o') i++; // where the answer is saved
    else if (a === '-X') method = argv[++i]!;
    else if (a === '-H') {
      const [name, ...value] = argv[++i]!.split(':');
      headers[name!.trim().toLowerCase()] = value.join(':').trim();
    } else if (a === '-d') body = argv[++i]!;
    else if (a.startsWith('-')) throw new Error(`curl option ${a} is not one the examples use`);
    else url = a;
  }
  if (!url) throw new Error('no URL');
  const address = /^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/.*)$/.exec(url);
  if (!address) throw new Error(`${url} is not the reader's tenure server`);
  const f = await filled(s, address[3]!, body);
  // "Within a moment": the access planner's pass, which the server's worker runs on its own.
  if (/\/access(\?|$)/.test(f.url)) while ((await h.container.stores.accessPlan.planBatch(500)).events === 500);
  const res = await h.app.inject({ method: (method ?? (body === null ? 'GET' : 'POST')) as 'GET', url: f.url, headers, ...(f.body === null ? {} : { payload: f.body }) });
  return { url: f.url, res };
}

/** Whether `value` holds the field `name` at some depth. */
const hasField = (value: unknown, name: string): boolean =>
  value !== null && typeof value === 'object' && (Object.hasOwn(value, name) || Object.values(value).some((v) => hasField(v, name)));

const h = useHarness();

const byFile = FILES.map((file) => ({ file, examples: examplesOf(file, readFileSync(path.join(ROOT, file), 'utf8')) })).filter((f) => f.examples.length > 0);

describe('the curl examples of the README and docs/', () => {
  it('are found where the docs have them', () => {
    expect(byFile.map((f) => f.file)).toEqual(expect.arrayContaining(['README.md', 'docs/access.md', 'docs/payments.md', 'docs/plans-targets.md']));
    expect(byFile.reduce((n, f) => n + f.examples.length, 0)).toBeGreaterThan(30);
  });

  for (const { file, examples } of byFile) {
    it(`${file}: each of its ${examples.length} examples answers as the doc says`, async () => {
      const s = new Session(h, await h.tenant());
      for (const ex of examples) {
        const where = `${ex.file}:${ex.line}: ${ex.command}`;
        const { url, res } = await run(s, h, ex);
        if (ex.expectStatus !== null) {
          expect(res.statusCode, `${where}\n${res.body}`).toBe(ex.expectStatus);
          continue;
        }
        expect(res.statusCode, `${where}\n${res.body}`).toBeLessThan(300);
        const answer = res.body.startsWith('{') ? (res.json() as unknown) : res.body;
        for (const field of ex.shows) expect(hasField(answer, field), `${where}: the answer has no ${field}\n${res.body}`).toBe(true);
        s.remember(url, res);
        if (ex.assigns) {
          const data = res.json().data as { target_id?: string; plan_id?: string };
          s.vars.set(ex.assigns, (data.target_id ?? data.plan_id)!);
        }
      }
    });
  }
});
