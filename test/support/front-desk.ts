import { sql } from 'drizzle-orm';
import type { REST } from '@discordjs/rest';
import { afterEach, expect } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { ConfirmationJob } from '../../src/domain/front-desk/confirmations.js';
import { createAccessWorker, createConfirmationJob } from '../../src/platform-jobs.js';
import { rowsOf } from '../../src/database/db.js';
import { addBot, connectBot, type TestBot } from './bots.js';
import { createPlan } from './catalogue.js';
import { userId, type Harness, type Tenant } from './harness.js';
import { connectStripe } from './payments.js';

/** Front desk test helpers (docs/front-desk.md): pay links and portal links, and the pages they open. */

export const payLinksPath = (t: Tenant) => `${t.base}/pay-links`;
export const portalLinksPath = (t: Tenant, user: string) => `${t.base}/users/${user}/portal-links`;

export interface PayLinkData {
  pay_link_id: string;
  url: string;
  expires_at: string;
}

/** A pay link that must be made; the answer's `data`. */
export async function payLink(t: Tenant, planId: string, user: string, extra: Record<string, unknown> = {}): Promise<PayLinkData> {
  const res = await t.request({ method: 'POST', url: payLinksPath(t), payload: { plan_id: planId, user_id: user, ...extra } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Stripe connected to a fresh project, a plan of 10 for 30 days, a member and their pay link. */
export async function payLinkStarted(h: Harness, o: { recurring?: boolean } = {}) {
  const t = await h.tenant();
  const stripe = await connectStripe(h, t);
  const plan = await createPlan(t, { plan_name: 'Gold', plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: o.recurring ?? false, plan_one_time: !o.recurring } });
  const user = userId();
  const link = await payLink(t, plan.plan_id, user);
  return { t, stripe, plan, user, link };
}

/** A page of the app, as a browser asks for it (no key). */
export function openPage(h: Harness, path: string, o: { method?: 'GET' | 'POST'; headers?: Record<string, string>; payload?: string } = {}) {
  return h.app.inject({ method: o.method ?? 'GET', url: path, headers: { accept: 'text/html', ...o.headers }, ...(o.payload !== undefined ? { payload: o.payload } : {}) });
}

/** The path of a link the app handed out (its URL starts with TENURE_PUBLIC_URL). */
export const pathOf = (url: string) => new URL(url).pathname;

/** An instant as a message writes it under the default settings (`YYYY-MM-DD`, 24 h, UTC): `2030-01-02 10:00 UTC`. */
export const messageInstant = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** The `<h1>` of an HTML page. */
export const headingOf = (html: string) => /<h1[^>]*>([^<]*)<\/h1>/.exec(html)?.[1] ?? null;

/** A project's notification rows (confirmations, invites, reminders), oldest first. */
export const notificationRows = async (h: Harness, projectId: string) =>
  rowsOf<{ state: string; attempts: number; platform: string }>(
    await h.container.database.db.execute(sql`SELECT state, attempts, platform FROM notifications WHERE project_id = ${projectId} ORDER BY created_at`),
  );

/** The members a project's bots cannot write to. */
export const unreachableMembers = async (h: Harness, projectId: string) =>
  rowsOf(await h.container.database.db.execute(sql`SELECT user_id, platform, reason FROM unreachable_members WHERE project_id = ${projectId}`));

export interface BotShop {
  t: Tenant;
  bot: TestBot;
  planId: string;
}

/** A project with its Discord bot connected and one plan (`plan`'s fields, Gold by default): its messages go by that bot. */
/**
 * The confirmations job as a worker builds it, sending through the harness's Discord bots; stopped
 * after each test. Each call takes the bots' leases again (a manual clock may have passed them) and
 * sends until nothing is due.
 */
export function useDiscordSender(h: Pick<Harness, 'container'>): () => Promise<void> {
  const jobs: ConfirmationJob[] = [];
  let holder: AccessWorker<REST> | null = null;
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
    await holder?.stop(0);
    holder = null;
  });
  return async () => {
    holder ??= createAccessWorker(h.container)!;
    if (jobs.length === 0) jobs.push(createConfirmationJob(h.container, { discord: holder, telegram: null }, { pollMs: 60_000 })!);
    await holder.leases.acquire();
    jobs[0]!.wake();
    await jobs[0]!.idle();
  };
}

/** Turns the project's messages of these kinds off (setting `messages`, docs/lifecycle.md). */
export async function turnOffMessages(t: Tenant, ...kinds: string[]): Promise<void> {
  const payload = { messages: Object.fromEntries(kinds.map((k) => [k, { enabled: false }])) };
  const off = await t.request({ method: 'PATCH', url: `${t.base}/settings`, payload });
  expect(off.statusCode, off.body).toBe(204);
}

export async function discordBotShop(h: Harness, plan: Record<string, unknown> = {}): Promise<BotShop> {
  const t = await h.tenant();
  const bot = addBot(h.discord);
  await connectBot(t, bot);
  const created = await createPlan(t, { plan_name: 'Gold', ...plan });
  return { t, bot, planId: created.plan_id };
}
