import { describe, expect, it } from 'vitest';
import { headingOf } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { addTelegramBot, connectTelegramBot } from '../support/bots.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { plansPage, webShop } from '../support/web.js';

describe('the public pages: GET / and GET /p/{project_id}', () => {
  const h = useHarness();

  it('GET / says what this server is and links to the API docs, as HTML', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(headingOf(res.body)).toBe('tenure');
    expect(res.body).toContain('membership service');
    expect(res.body).toContain('href="/docs"');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('lists the plans with price, terms and what they grant, and a Buy with Discord form carrying a CSRF token', async () => {
    const shop = await webShop(h, { planName: 'Gold' });
    const { res, csrf } = await plansPage(h, shop.t.projectId);
    expect(res.body).toContain('<h2>Gold</h2>');
    expect(res.body).toContain('for 30 days, paid once');
    expect(res.body).toContain('VIP (Discord role)');
    expect(res.body).toContain('action="/auth/discord/start"');
    expect(res.body).toContain(`name="plan_id" value="${shop.planId}"`);
    expect(csrf).toMatch(/\S{10,}/);
    const csrfCookie = res.cookies.find((c) => c.name === 'tenure_csrf');
    expect(csrfCookie).toMatchObject({ path: '/auth/discord/', httpOnly: true });
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain(`form-action 'self' https://billing.stripe.com https://checkout.stripe.com ${new URL(h.config.access.discordApiUrl).origin}`);
    expect(csp).toContain("default-src 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('a Telegram plan links to the project’s bot, which lists the plans on /start; a Discord plan without a client secret says to ask the team', async () => {
    const shop = await webShop(h, { clientSecret: false });
    const bot = addTelegramBot(h.telegram, 'club_door_bot');
    await connectTelegramBot(shop.t, bot);
    const group = await createTarget(shop.t, { platform: 'telegram', kind: 'group', target_name: 'Lounge', external_id: '-1001234567890' });
    const plan = await createPlan(shop.t, { plan_name: 'Lounge pass', plan_duration: '1 month', plan_data: { plan_recurring: true, plan_one_time: false } });
    await grant(shop.t, plan.plan_id, group.target_id);
    const { res } = await plansPage(h, shop.t.projectId);
    expect(res.body).toContain('href="https://t.me/club_door_bot"');
    expect(res.body).toContain('renews every 1 month until you cancel');
    expect(res.body).toContain('Lounge (Telegram group)');
    expect(res.body).not.toContain('action="/auth/discord/start"');
    expect(res.body).toContain('buying on the web is not set up yet');
  });

  it('renders owner-given names inert: no markup from a project or plan name reaches the page', async () => {
    const xss = `<script>alert(1)</script><img src=x onerror=alert(2)>"'`;
    const shop = await webShop(h, { projectName: xss, planName: xss });
    const { res } = await plansPage(h, shop.t.projectId);
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).not.toContain('<img src=x');
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('an unknown or malformed project is a 404 page, not JSON', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', '%3Cscript%3E']) {
      const res = await h.app.inject({ method: 'GET', url: `/p/${id}` });
      expect(res.statusCode, id).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(headingOf(res.body)).toBe('Page not found');
    }
  });

  it('branding: the logo (https only) and the accent colour through the project’s stylesheet, its text colour picked for contrast', async () => {
    const shop = await webShop(h);
    const put = (key: string, value: unknown) => shop.t.request({ method: 'PUT', url: `${shop.t.base}/settings/${key}`, payload: { value } });
    for (const bad of ['http://cdn.example.com/logo.png', 'javascript:alert(1)', 'https://user:pw@cdn.example.com/x.png', 42]) {
      const res = await put('page_logo_url', bad);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.body).toContain('page_logo_url must be null or an https URL');
    }
    for (const bad of ['red', '#fff', '#12345g', 'rgb(0,0,0)', '#ffffff;}body{display:none']) {
      const res = await put('page_accent_color', bad);
      expect(res.statusCode, res.body).toBe(422);
    }
    expect((await put('page_logo_url', 'https://cdn.example.com/logo.png')).statusCode).toBe(204);
    expect((await put('page_accent_color', '#FFFF00')).statusCode).toBe(204);
    const got = await shop.t.request({ method: 'GET', url: `${shop.t.base}/settings/page_accent_color` });
    expect(got.json().data).toStrictEqual({ page_accent_color: '#ffff00' });
    const { res } = await plansPage(h, shop.t.projectId);
    expect(res.body).toContain('<img class="logo" src="https://cdn.example.com/logo.png"');
    expect(res.body).toContain(`href="/p/${shop.t.projectId}/brand.css"`);
    expect(String(res.headers['content-security-policy'])).toContain("img-src 'self' https:");
    const css = await h.app.inject({ method: 'GET', url: `/p/${shop.t.projectId}/brand.css` });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    // Yellow: black text on the buttons, and links keep tenure's own colour (yellow on white is unreadable).
    expect(css.body).toBe(':root { --accent: #ffff00; --on-accent: #000000; --link: #3a36c9; }\n');
  });
});
