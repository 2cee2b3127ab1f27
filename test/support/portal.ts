import { expect } from 'vitest';
import { headingOf, openPage, pathOf, payLinkStarted, portalLinksPath } from './front-desk.js';
import type { Harness, Tenant } from './harness.js';
import { deliverAll } from './payments.js';

/**
 * The member portal's test helpers (docs/portal.md): a member who paid through a pay link, and a
 * browser of theirs holding the portal's cookies, which fills in and posts the page's forms.
 */

/** A member who paid a 30-day plan (a subscription unless `recurring: false`) through a pay link, and a portal link of theirs. */
export async function paidMember(h: Harness, o: { recurring?: boolean } = {}) {
  const started = await payLinkStarted(h, { recurring: o.recurring ?? true });
  const opened = await openPage(h, pathOf(started.link.url));
  const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(String(opened.headers.location))![1]!;
  await deliverAll(h, started.stripe, h.stripe.world.pay(sessionId));
  const portalUrl = await portalLink(started.t, started.user);
  const subscriptionId = h.stripe.world.session(sessionId).subscription;
  return { ...started, sessionId, subscriptionId, portalUrl, portalPath: pathOf(portalUrl) };
}

/** A fresh portal link of `user`'s (its URL). */
export async function portalLink(t: Tenant, user: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: portalLinksPath(t, user) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.url;
}

export const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1];

/** A browser: keeps the cookies pages set and sends them back, as one would. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly h: Harness) {}

  private header(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  async get(path: string) {
    const res = await openPage(this.h, path, { headers: this.header() });
    for (const c of res.cookies) this.cookies.set(c.name, c.value);
    return res;
  }

  /** Posts `fields` as the page's form would (with `_csrf` when given). */
  async post(path: string, fields: Record<string, string>) {
    const res = await openPage(this.h, path, {
      method: 'POST',
      headers: { ...this.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
    for (const c of res.cookies) this.cookies.set(c.name, c.value);
    return res;
  }
}

/** Opens the portal in a new browser; the page (200) and the browser. */
export async function openPortal(h: Harness, portalPath: string) {
  const browser = new Browser(h);
  const page = await browser.get(portalPath);
  expect(page.statusCode, page.body).toBe(200);
  expect(headingOf(page.body)).toBe('Your memberships');
  return { browser, page, csrf: csrfOf(page.body)! };
}

/** The text of a page, tags dropped and spaces collapsed: what a member reads. */
export const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim();
