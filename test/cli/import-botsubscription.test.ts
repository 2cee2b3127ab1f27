import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { cliOn, type CliResult } from '../support/cli.js';
import { community, startFakeBotSubscription, type FakeBotSubscription, type FakeProject } from '../support/fake-botsubscription.js';
import { useHarness } from '../support/harness.js';
import { capturedLogs } from '../support/logs.js';

/**
 * `npx tenure import botsubscription` against a fake of the hosted product's v2 API
 * (test/support/fake-botsubscription.ts): a whole community moved in, a second run that changes
 * nothing, a run cut off by the source that the next run finishes, the source's limits kept, a
 * refused key that writes nothing, and the key never printed or logged.
 */

const logs = capturedLogs('debug');
const h = useHarness({ logger: logs.logger });
let fake: FakeBotSubscription;

beforeAll(async () => {
  // A short window, so the limit test waits a second, not a minute.
  fake = await startFakeBotSubscription({ limit: 10, windowMs: 1_000 });
});
afterAll(() => fake.close());

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface Report {
  brought_over: Record<string, number>;
  already_there: Record<string, number>;
  not_brought_over: { kind: string; source_id: string; reason: string }[];
  source_requests: number;
  rate_limited: number;
}

async function newProject(): Promise<string> {
  const res = await cliOn(h)('project', 'create', '--name', 'moving in');
  expect(res.code, res.stderr).toBe(0);
  return (JSON.parse(res.stdout) as { id: string }).id;
}

const outputs: CliResult[] = [];
const keys: string[] = [];

async function move(projectId: string, source: FakeProject, key = source.key, ...more: string[]): Promise<CliResult & { report: Report }> {
  keys.push(key);
  const res = await cliOn(h, { BOTSUBSCRIPTION_API_KEY: key })(
    'import', 'botsubscription', '--project', projectId, '--source-project', source.id, '--base-url', fake.url, ...more,
  );
  outputs.push(res);
  return { ...res, report: (res.stdout ? JSON.parse(res.stdout) : null) as Report };
}

/** What the project holds, as the API would answer it, ids of targets left out (tenure makes its own). */
async function snapshot(projectId: string) {
  const { services } = h;
  const targets = (await services.targets.list(projectId, { limit: 100, offset: 0 })).items;
  const name = new Map(targets.map((t) => [t.target_id, t.target_name]));
  const plans = (await services.plans.list(projectId, { limit: 100, offset: 0 })).items;
  const memberships = [];
  for (let offset = 0; ; offset += 100) {
    const page = await services.memberships.list(projectId, { limit: 100, offset });
    memberships.push(...page.items);
    if (page.items.length < 100) break;
  }
  const events = rowsOf<{ n: number }>(await h.database.db.execute(sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${projectId}`))[0]!.n;
  return {
    settings: await services.settings.all(projectId),
    targets: targets.map((t) => ({ name: t.target_name, platform: t.platform, kind: t.kind, external_id: t.external_id, parent: t.parent_target_id && name.get(t.parent_target_id) })).sort((a, b) => a.name.localeCompare(b.name)),
    plans: plans.map((p) => ({ id: p.plan_id, name: p.plan_name, price: p.plan_price, currency: p.plan_currency, targets: p.plan_targets.map((t) => t.target_name) })).sort((a, b) => a.name.localeCompare(b.name)),
    memberships: memberships.map((m) => ({ user_id: m.user_id, plan_id: m.plan_id, end: m.membership_end_date, name: m.user_name })).sort((a, b) => a.user_id.localeCompare(b.user_id)),
    events,
  };
}

/** What the project must hold once `source` came over whole. */
function expected(source: FakeProject) {
  return {
    memberships: source.memberships
      .map((m) => ({ user_id: m.user_id, plan_id: m.plan_id, end: m.membership_end_date, name: m.user_name }))
      .sort((a, b) => String(a.user_id).localeCompare(String(b.user_id))),
    plans: source.plans.map((p) => ({ id: p.plan_id, name: p.plan_name })),
  };
}

async function isBanned(projectId: string, userId: string): Promise<boolean> {
  const tried = await h.services.memberships.create(projectId, { user_id: userId, end_date: Date.now() + DAY });
  if (tried.ok) await h.services.memberships.delete(projectId, tried.value.membership_id);
  return !tried.ok && /banned/.test(tried.error.message);
}

describe('tenure import botsubscription', () => {
  it('moves a whole community in, and a second run changes nothing', async () => {
    const source = fake.project(community(300));
    const projectId = await newProject();

    const first = await move(projectId, source);
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.not_brought_over).toEqual([]);
    // time_format_preference is already tenure's default; the other four differ.
    expect(first.report.brought_over).toEqual({ setting: 4, target: 3, plan: 2, membership: 300, user: 302, ban: 3 });
    expect(first.stderr).toMatch(/ETA/);
    expect(first.stderr).toMatch(/everything came over\n$/);

    const after = await snapshot(projectId);
    expect(after.settings).toMatchObject({ default_language: 'de', timezone_preference: 'Europe/Berlin', default_currency: 'EUR', support_enabled: true });
    expect(after.targets).toEqual([
      { name: 'Club', platform: 'discord', kind: 'guild', external_id: source.targets[0]!.external_id, parent: null },
      { name: 'Club news', platform: 'telegram', kind: 'channel', external_id: source.targets[2]!.external_id, parent: null },
      { name: 'Members', platform: 'discord', kind: 'role', external_id: source.targets[1]!.external_id, parent: 'Club' },
    ]);
    expect(after.plans).toEqual([
      { id: source.plans[0]!.plan_id, name: 'Monthly', price: '9.99', currency: 'EUR', targets: ['Members'] },
      { id: source.plans[1]!.plan_id, name: 'News', price: '99.00', currency: 'EUR', targets: ['Club news'] },
    ]);
    expect(after.memberships).toEqual(expected(source).memberships);
    const banned = source.users.filter((u) => u.is_banned).map((u) => String(u.user_id));
    for (const userId of banned) expect(await isBanned(projectId, userId), userId).toBe(true);
    // Through the services: each membership its membership.created event, each ban its user.banned.
    expect(after.events).toBeGreaterThanOrEqual(300 + 3 + 3 + 2);

    const second = await move(projectId, source);
    expect(second.code, second.stderr).toBe(0);
    expect(second.report.brought_over).toEqual({ setting: 0, target: 0, plan: 0, membership: 0, user: 0, ban: 0 });
    expect(second.report.already_there).toEqual({ setting: 5, target: 3, plan: 2, membership: 300, user: 302, ban: 3 });
    expect(await snapshot(projectId)).toEqual(after);
  });

  it('goes on where a run cut off by the source stopped, and ends as a whole run does', async () => {
    const source = fake.project(community(300));
    const projectId = await newProject();
    // The settings and the first page of each list (5 requests), then the second page of
    // memberships; the third fails, with no retries.
    fake.failAfter(6);
    const cut = await move(projectId, source, source.key, '--retries', '0');
    fake.failAfter(null);
    expect(cut.code, cut.stderr).toBe(1);
    expect(cut.stdout).toBe('');
    expect(cut.stderr).toMatch(/answered 503.*run the same command again/);
    const partial = await snapshot(projectId);
    expect(partial.memberships).toHaveLength(200);

    const resumed = await move(projectId, source);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.report.brought_over).toMatchObject({ membership: 100, plan: 0, target: 0 });
    expect(resumed.report.already_there).toMatchObject({ membership: 200, plan: 2, target: 3 });
    const done = await snapshot(projectId);
    expect(done.memberships).toEqual(expected(source).memberships);
    expect(done.plans.map((p) => p.id)).toEqual(expected(source).plans.map((p) => p.id));
  });

  it("keeps under the source's limit and waits out each 429 for its Retry-After", async () => {
    // 450 members: 5 pages of memberships and of users, 13 requests against 10 a window.
    const source = fake.project(community(450));
    const projectId = await newProject();
    const before = { ...fake.counts };
    const first = fake.requests.length;
    fake.refuseNext(2);
    const res = await move(projectId, source);
    expect(res.code, res.stderr).toBe(0);
    expect(res.report.rate_limited).toBe(2);
    // Only the two refusals asked for: the headers kept the client inside the window.
    expect(fake.counts.refused429 - before.refused429).toBe(2);
    expect(fake.counts.ignored429 - before.ignored429).toBe(0);
    // What reached the source: each of the 13 reads answered once, after the two refusals.
    const statuses = fake.requests.slice(first).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(13);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(statuses).toHaveLength(15);
    // The client counts a request sent again on a connection the fake had closed meanwhile too.
    expect(res.report.source_requests).toBeGreaterThanOrEqual(15);
    expect((await snapshot(projectId)).memberships).toHaveLength(450);
  });

  it('reports what could not come over, with its reason, and exits 2', async () => {
    const data = community(6);
    const now = Date.now();
    data.settings = { ...data.settings, default_currency: 'EURO', loyalty_points: true };
    data.memberships[1]!.membership_end_date = iso(now - DAY);
    data.memberships[2]!.subscription_id = 'sub_123';
    data.plans.push({ ...data.plans[0]!, plan_id: randomUUID(), plan_name: 'Broken', plan_duration: 'forever' });
    data.users.push({ ...data.users[3]!, user_id: '4242424242', is_banned: false });
    const source = fake.project(data);
    const projectId = await newProject();

    const res = await move(projectId, source);
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/not brought over .*exit code 2\n$/);
    const refused = res.report.not_brought_over;
    const reasonOf = (kind: string, id: string) => refused.find((r) => r.kind === kind && r.source_id === id)?.reason;
    expect(reasonOf('setting', 'default_currency'), JSON.stringify(refused)).toMatch(/currency/);
    expect(reasonOf('setting', 'loyalty_points')).toMatch(/no setting loyalty_points/);
    expect(reasonOf('subscription', 'sub_123')).toMatch(/recurring payment/);
    expect(reasonOf('plan', String(data.plans[2]!.plan_id))).toMatch(/plan_duration forever/);
    expect(reasonOf('user', '4242424242')).toMatch(/neither/);
    expect(refused).toHaveLength(5);
    expect(res.report.brought_over).toMatchObject({ membership: 6, plan: 2, setting: 3, user: 8 });
    // A membership that had ended comes over expired, with its own dates.
    const ended = data.memberships[1]!;
    const page = await h.services.memberships.list(projectId, { userId: String(ended.user_id), limit: 1, offset: 0 });
    expect(page.items[0]).toMatchObject({
      status: 'expired',
      membership_start_date: ended.membership_start_date,
      membership_end_date: ended.membership_end_date,
      plan_id: ended.plan_id,
      user_name: { first_name: 'Member 1', username: null },
    });

    const again = await move(projectId, source);
    expect(again.code).toBe(2);
    expect(again.report.brought_over).toEqual({ setting: 0, target: 0, plan: 0, membership: 0, user: 0, ban: 0 });
    expect(again.report.not_brought_over).toEqual(refused);
  });

  it('writes nothing with a key the source refuses, and says so', async () => {
    const source = fake.project(community(3));
    const other = fake.project(community(1));
    const projectId = await newProject();
    const empty = await snapshot(projectId);

    const wrong = await move(projectId, source, 'bs_wrong_key_0123456789');
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toMatch(/refused the API key \(401: Invalid API key\); check BOTSUBSCRIPTION_API_KEY\. Nothing was written\./);

    const foreign = await move(projectId, source, other.key);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(/may not read project .*\(403/);
    expect(await snapshot(projectId)).toEqual(empty);

    const none = await cliOn(h)('import', 'botsubscription', '--project', projectId, '--source-project', source.id, '--base-url', fake.url);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/Set BOTSUBSCRIPTION_API_KEY/);
  });

  it('never prints or logs the key', () => {
    expect(outputs.length).toBeGreaterThanOrEqual(6);
    const printed = outputs.map((o) => o.stdout + o.stderr).join('\n') + JSON.stringify(logs.lines);
    for (const key of keys) expect(printed).not.toContain(key);
  });
});
