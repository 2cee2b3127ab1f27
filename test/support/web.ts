import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, expect } from 'vitest';
import { createGuildJoinJob, type GuildJoinRunner } from '../../src/web/guild-join-job.js';
import { addBot, discordPath, type TestBot } from './bots.js';
import { createPlan, createTarget, grant, snowflake } from './catalogue.js';
import type { Harness, Tenant } from './harness.js';
import { connectStripe, type ConnectedStripe } from './payments.js';

/** Members on the web (docs/web.md): a project selling a Discord plan with Login with Discord set up, and the login's steps. */

export interface WebShop {
  t: Tenant;
  bot: TestBot;
  stripe: ConnectedStripe;
  guildId: string;
  roleId: string;
  planId: string;
  clientSecret: string;
}

export const callbackUrl = (h: Harness) => `${h.config.frontDesk.publicUrl}/auth/discord/callback`;

/** Stripe and a Discord bot (with its application's client secret) connected; a plan granting a role of a guild. */
export async function webShop(h: Harness, o: { planName?: string; projectName?: string; clientSecret?: boolean; recurring?: boolean } = {}): Promise<WebShop> {
  const t = await h.tenant();
  if (o.projectName !== undefined) await h.database.db.execute(`UPDATE projects SET name = '${o.projectName.replace(/'/g, "''")}' WHERE id = '${t.projectId}'`);
  const stripe = await connectStripe(h, t);
  const bot = addBot(h.discord);
  const guildId = snowflake();
  const roleId = snowflake();
  h.discord.addGuild({ id: guildId, name: 'Club' });
  h.discord.addRole(guildId, { id: roleId, position: 1, name: 'VIP' });
  h.discord.oauth.allowInvites(guildId, bot.id);
  const guild = await createTarget(t, { kind: 'guild', target_name: 'Club', external_id: guildId });
  const role = await createTarget(t, { kind: 'role', target_name: 'VIP', external_id: roleId, parent_target_id: guild.target_id });
  const recurring = o.recurring ? { plan_data: { plan_recurring: true, plan_one_time: false } } : {};
  const plan = await createPlan(t, { plan_name: o.planName ?? 'Gold', plan_price: '10', plan_duration: '30 days', ...recurring });
  await grant(t, plan.plan_id, role.target_id);
  const clientSecret = randomBytes(24).toString('base64url');
  const payload = o.clientSecret === false ? { bot_token: bot.token } : { bot_token: bot.token, client_secret: clientSecret };
  const res = await t.request({ method: 'PUT', url: discordPath(t), payload });
  expect(res.statusCode, res.body).toBe(200);
  h.discord.oauth.registerApplication(bot.id, clientSecret, [callbackUrl(h)]);
  // The fake is the harness's, shared by a file's tests: each shop starts with a user who consents.
  h.discord.oauth.nextLogin = {};
  h.discord.oauth.refuseExchanges = false;
  return { t, bot, stripe, guildId, roleId, planId: plan.plan_id, clientSecret };
}

/** `name=value` pairs of a response's Set-Cookie, for the next request's Cookie header. */
export function cookiesOf(res: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(res.cookies.filter((c) => c.value !== '').map((c) => [c.name, c.value]));
}

export const cookieHeader = (cookies: Record<string, string>) =>
  Object.entries(cookies)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');

/** The plans page, and its form's CSRF token and cookie. */
export async function plansPage(h: Harness, projectId: string) {
  const res = await h.app.inject({ method: 'GET', url: `/p/${projectId}`, headers: { accept: 'text/html' } });
  expect(res.statusCode, res.body).toBe(200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? null;
  return { res, csrf, cookies: cookiesOf(res) };
}

/** Presses Buy with Discord: the POST the page's form makes. */
export async function startLogin(h: Harness, shop: Pick<WebShop, 't' | 'planId'>) {
  const page = await plansPage(h, shop.t.projectId);
  expect(page.csrf, page.res.body).not.toBeNull();
  const res = await h.app.inject({
    method: 'POST',
    url: '/auth/discord/start',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(page.cookies) },
    payload: new URLSearchParams({ _csrf: page.csrf!, project_id: shop.t.projectId, plan_id: shop.planId }).toString(),
  });
  return { res, cookies: { ...page.cookies, ...cookiesOf(res) } };
}

/** Discord's consent page, pressed at once: where Discord sends the browser back to. */
export async function authorize(authorizeUrl: string): Promise<string> {
  const answer = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(answer.status, await answer.clone().text()).toBe(302);
  return answer.headers.get('location')!;
}

/** Discord's redirect back to tenure, in the browser holding `cookies`. */
export function callback(h: Harness, location: string, cookies: Record<string, string>) {
  const url = new URL(location);
  return h.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { accept: 'text/html', cookie: cookieHeader(cookies) } });
}

/** The whole login: Buy → Discord → back; the callback's answer. */
export async function loginThrough(h: Harness, shop: WebShop) {
  const started = await startLogin(h, shop);
  expect(started.res.statusCode, started.res.body).toBe(303);
  const location = await authorize(started.res.headers.location as string);
  return { res: await callback(h, location, started.cookies), location, cookies: started.cookies };
}

/**
 * A pass of the guild join job, as a worker would run it after a payment: each call builds a job,
 * wakes it and waits for it to be idle; every job made is stopped after each test.
 */
export function guildJoinPasses(h: Harness): () => Promise<void> {
  const jobs: GuildJoinRunner[] = [];
  afterEach(async () => {
    for (const j of jobs.splice(0)) await j.stop();
  });
  return async () => {
    const j = createGuildJoinJob(h.container, { pollMs: 60_000 })!;
    jobs.push(j);
    j.wake();
    await j.idle();
  };
}

/**
 * `buyer` logs in with Discord for the shop's plan and opens their pay link: the pay link's path
 * and the Checkout Session it made, not paid yet.
 */
export async function checkoutAfterLogin(h: Harness, shop: WebShop, buyer: string): Promise<{ payPath: string; sessionId: string }> {
  h.discord.oauth.nextLogin = { userId: buyer };
  const { res } = await loginThrough(h, shop);
  expect(res.statusCode, res.body).toBe(303);
  const payPath = res.headers.location as string;
  const open = await h.app.inject({ method: 'GET', url: payPath });
  expect(open.statusCode, open.body).toBe(303);
  return { payPath, sessionId: /(cs_test_[A-Za-z0-9]+)$/.exec(open.headers.location as string)![1]! };
}
