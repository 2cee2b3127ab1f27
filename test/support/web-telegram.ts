import { createHash, createHmac } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/db.js';
import { addTelegramBot, connectTelegramBot, type TestBot } from './bots.js';
import { createPlan, createTarget, grant } from './catalogue.js';
import type { Harness, Tenant } from './harness.js';
import { connectStripe, type ConnectedStripe } from './payments.js';

/** Signing in with the Telegram Login Widget (docs/web.md): a project selling a Telegram plan, and the widget's answers. */

export interface TelegramShop {
  t: Tenant;
  bot: TestBot;
  stripe: ConnectedStripe;
  chatId: number;
  planId: string;
}

/** Stripe and a Telegram bot connected (an admin of a group); a plan granting that group. */
export async function telegramShop(h: Harness, o: { planName?: string; projectName?: string; recurring?: boolean } = {}): Promise<TelegramShop> {
  const t = await h.tenant();
  if (o.projectName !== undefined) await h.database.db.execute(sql`UPDATE projects SET name = ${o.projectName} WHERE id = ${t.projectId}`);
  const stripe = await connectStripe(h, t);
  const bot = addTelegramBot(h.telegram, `night_owls_${t.projectId.slice(0, 6)}_bot`);
  const chatId = h.telegram.addChat({ type: 'supergroup' }).id;
  h.telegram.setBot(chatId, Number(bot.id), 'admin');
  await connectTelegramBot(t, bot);
  const target = await createTarget(t, { target_name: 'Lounge', platform: 'telegram', kind: 'group', external_id: String(chatId) });
  const recurring = o.recurring ? { plan_data: { plan_recurring: true, plan_one_time: false } } : {};
  const plan = await createPlan(t, { plan_name: o.planName ?? 'Lounge pass', plan_price: '10', plan_duration: '30 days', ...recurring });
  await grant(t, plan.plan_id, target.target_id);
  return { t, bot, stripe, chatId, planId: plan.plan_id };
}

/** The widget's `data-auth-url` path: buying `planId`, or (none) signing in to the portal. */
export const telegramLoginPath = (projectId: string, planId?: string) => `/p/${projectId}/telegram/login${planId ? `/${planId}` : ''}`;

/**
 * What Telegram appends to the widget's `data-auth-url` for `user`, signed with `botToken` as
 * Telegram documents it: the data-check-string (every field but hash, sorted by key, `key=value`
 * lines joined by `\n`), the secret key SHA-256(bot token), the hex HMAC-SHA-256. `authDate`
 * defaults to now.
 */
export function widgetAnswer(botToken: string, user: { id: number | string; first_name?: string; last_name?: string; username?: string; photo_url?: string }, authDate = new Date()): URLSearchParams {
  const fields: Record<string, string> = { auth_date: String(Math.floor(authDate.getTime() / 1000)), first_name: user.first_name ?? 'Ada', id: String(user.id) };
  for (const k of ['last_name', 'username', 'photo_url'] as const) if (user[k] !== undefined) fields[k] = user[k];
  const dataCheckString = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const secretKey = createHash('sha256').update(botToken).digest();
  return new URLSearchParams({ ...fields, hash: createHmac('sha256', secretKey).update(dataCheckString).digest('hex') });
}

/**
 * The cookies the page showing the widget for `path` (the plan page for a plan's callback, the
 * portal's sign-in page for the portal's) leaves for that callback, as a `cookie` header: what a
 * browser that showed the widget sends back. Empty when the page left none.
 */
export async function widgetPageCookies(h: Harness, path: string): Promise<string> {
  const [, projectId, plan] = /^\/p\/([^/]+)\/telegram\/login(\/[^/?]+)?$/.exec(path) ?? [];
  if (projectId === undefined) return '';
  const shown = await h.app.inject({ method: 'GET', url: plan ? `/p/${projectId}` : `/p/${projectId}/portal`, headers: { accept: 'text/html' } });
  return shown.cookies
    .filter((c) => c.path !== undefined && (path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)))
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}

/**
 * The widget's redirect back to tenure: the path and Telegram's query, in a browser that opened the
 * page showing the widget first (its cookies sent), unless `cookie` says what this browser holds.
 */
export async function widgetCallback(h: Harness, path: string, query: URLSearchParams, o: { cookie?: string } = {}) {
  const cookie = o.cookie ?? (await widgetPageCookies(h, path));
  return h.app.inject({ method: 'GET', url: `${path}?${query.toString()}`, headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
}

/** What a login may have written: the project's pay links and used widget answers. */
export async function telegramLoginTraces(h: Harness, projectId: string) {
  const [payLinks, used] = await Promise.all([
    h.database.db.execute(sql`SELECT user_id, plan_id FROM pay_links WHERE project_id = ${projectId} ORDER BY created_at`),
    h.database.db.execute(sql`SELECT count(*)::int AS n FROM telegram_logins WHERE project_id = ${projectId}`),
  ]);
  return { payLinks: rowsOf<{ user_id: string; plan_id: string }>(payLinks), used: rowsOf<{ n: number }>(used)[0]!.n };
}
