import type { FastifyReply } from 'fastify';

/**
 * The dashboard's Content-Security-Policy (docs/dashboard.md): no script at all, one stylesheet of
 * ours, no framing, forms posting only to us (and Discord's authorize page, where the Discord
 * sign-in form redirects). Two kinds of page loosen it for themselves only: a page with a chart
 * (`allowOwnScripts`: our own script files, such as /dashboard/assets/chart.umd.js) and the sign-in
 * page showing the Telegram Login Widget (`allowTelegramWidget`).
 */

export function directivesOf(discordOrigin: string) {
  return {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'https:'],
    formAction: ["'self'", discordOrigin],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  };
}

type Directives = ReturnType<typeof directivesOf>;

/** For a page that loads a script of ours (a chart): `script-src 'self'`, nothing inline. */
export function allowOwnScripts(reply: FastifyReply): void {
  const directives = reply.server.dashboardCsp;
  reply.helmet({ contentSecurityPolicy: { useDefaults: false, directives: { ...directives, scriptSrc: ["'self'"] } } });
}

/** For the sign-in page showing Telegram's widget: its script, its button's frame, and the window it opens keeping its opener. */
export function allowTelegramWidget(reply: FastifyReply, widget: { scriptOrigin: string; frameOrigin: string }): void {
  const directives = reply.server.dashboardCsp;
  reply.helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { ...directives, scriptSrc: [widget.scriptOrigin], frameSrc: [widget.frameOrigin] } },
    crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' },
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The dashboard scope's CSP directives (src/http/dashboard/csp.ts). */
    dashboardCsp: Directives;
  }
}
