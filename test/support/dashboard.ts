import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { addBot, discordPath } from './bots.js';
import type { Harness, Tenant } from './harness.js';

/**
 * A browser's view of the dashboard over `app.inject` (docs/dashboard.md): a cookie jar (the
 * session's and the CSRF secret's), GETs, and form POSTs carrying the CSRF token of the page they
 * came from. `signIn` goes through a one-time link as the owner, or as an admin (`userId`).
 */
export class DashboardBrowser {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page read (its forms' `_csrf`). */
  csrf = '';

  constructor(private readonly h: Harness) {}

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = c.value === '' || (c.expires !== undefined && c.expires.getTime() <= Date.now()) || c.maxAge === 0;
      if (gone) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(res.body);
    if (token) this.csrf = token[1]!;
    return res;
  }

  private get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.keep(await this.h.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader } }));
  }

  /** A form POST; `_csrf` is the last page's token unless `fields` names one. */
  async post(url: string, fields: Record<string, string | string[]> = {}): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    if (!('_csrf' in fields)) body.append('_csrf', this.csrf);
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    return this.keep(
      await this.h.app.inject({ method: 'POST', url, payload: body.toString(), headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' } }),
    );
  }

  /** Signs in through a fresh one-time link (owner, or the admin `userId`); ends on the overview's 303. */
  async signIn(t: Tenant, userId: string | null = null): Promise<void> {
    const link = await this.h.services.dashboardSessions.createLink(t.projectId, userId);
    if (!link.ok) throw link.error;
    const path = new URL(link.value.url).pathname;
    const page = await this.get(path);
    expect(page.statusCode, page.body).toBe(200);
    const res = await this.post(path);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/dashboard/${t.projectId}`);
  }
}

/** A fresh one-time link's path (`/dashboard/sign-in/{token}`). */
export async function linkPath(h: Harness, t: Tenant, userId: string | null = null): Promise<string> {
  const link = await h.services.dashboardSessions.createLink(t.projectId, userId);
  if (!link.ok) throw link.error;
  return new URL(link.value.url).pathname;
}

/** A project whose Discord application takes dashboard sign-ins (the bot connected with its client secret, the dashboard's callback registered). */
export async function dashboardDiscord(h: Harness, t: Tenant): Promise<void> {
  const bot = addBot(h.discord);
  const clientSecret = randomBytes(24).toString('base64url');
  const res = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token, client_secret: clientSecret } });
  expect(res.statusCode, res.body).toBe(200);
  h.discord.oauth.registerApplication(bot.id, clientSecret, [`${h.config.frontDesk.publicUrl.replace(/\/+$/, '')}/dashboard/discord/callback`]);
  h.discord.oauth.nextLogin = {};
  h.discord.oauth.refuseExchanges = false;
}
