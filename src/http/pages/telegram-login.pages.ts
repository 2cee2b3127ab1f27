import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { INTENT_TTL_MS, type TelegramLoginOutcome, type TelegramLoginPurpose, type TelegramLoginService } from '../../domain/web/telegram-login.service.js';
import type { PublicPageService } from '../../domain/web/public-page.js';
import { isUuid } from '../../domain/ids.js';
import { messagePage, type Message, type PageContext } from './render.js';

/**
 * Signing in with the Telegram Login Widget (docs/web.md, "Signing in with Telegram"): where the
 * widget sends the browser back. `GET /p/{project_id}/telegram/login/{plan_id}` (buying: on to the
 * buyer's own pay link) and `GET /p/{project_id}/telegram/login` (the portal: on to the member's own
 * portal link), each with Telegram's signed fields in the query. The plan is in the path, never in
 * the query: the query is Telegram's, and a field of ours there would be one more signed field.
 * Every redirect goes to a path of ours; no parameter names where to go. The callback takes an
 * answer only in a browser holding the intent the page showing the widget left there (a cookie,
 * `leaveTelegramIntent`): against login CSRF, docs/web.md, "Signing in with Telegram".
 */

/** The intent's cookies, one per purpose so the plan page and the portal's sign-in page do not undo each other. */
const INTENT_COOKIE: Record<TelegramLoginPurpose, string> = { plans: 'tenure_tg_plans', portal: 'tenure_tg_portal' };

/** HTTP-only, Lax (Telegram's redirect back is a top-level GET), Secure behind https, sent only to the project's callback. */
const intentCookieOf = (context: PageContext, projectId: string, purpose: TelegramLoginPurpose) => ({
  path: `${context.base}/p/${encodeURIComponent(projectId)}/telegram/login${purpose === 'plans' ? '/' : ''}`,
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: context.secure,
});

/** Leaves in this browser the intent to use the widget the page shows (the plan page: buying; the portal's sign-in page: signing in). */
export function leaveTelegramIntent(reply: FastifyReply, context: PageContext, projectId: string, purpose: TelegramLoginPurpose, intent: string | null) {
  if (intent !== null) reply.setCookie(INTENT_COOKIE[purpose], intent, { ...intentCookieOf(context, projectId, purpose), maxAge: INTENT_TTL_MS / 1000 });
}

/** Telegram's widget: its script, and the origins the page's Content-Security-Policy lets it use. */
export const TELEGRAM_WIDGET = {
  script: 'https://telegram.org/js/telegram-widget.js?22',
  scriptOrigin: 'https://telegram.org',
  /** The widget draws its button in a frame of this origin. */
  frameOrigin: 'https://oauth.telegram.org',
} as const;

export interface TelegramLoginPagesOptions {
  login: Pick<TelegramLoginService, 'finish'>;
  pages: Pick<PublicPageService, 'page'>;
  context: PageContext;
}

type Params = { Params: { project_id: string; plan_id?: string } };

const NO_PROJECT: Message = { title: 'Page not found', lines: ['There is no membership page at this address. Check that you opened all of it.'] };
const START_AGAIN = 'Go back to the plans page and press Log in with Telegram again.';
const START_HERE = 'Go back to the plans page in this browser and press Log in with Telegram there: a login counts only in the browser where its page was opened, within 10 minutes.';

export const telegramLoginPages: FastifyPluginAsync<TelegramLoginPagesOptions> = async (app, { login, pages, context }) => {
  const plansPath = (projectId: string) => `${context.base}/p/${encodeURIComponent(projectId)}`;

  const callback = async (projectId: string, planId: string | null, request: FastifyRequest, reply: FastifyReply) => {
    if (!isUuid(projectId) || (planId !== null && !isUuid(planId))) return messagePage(reply, context, 404, NO_PROJECT);
    const { url } = request;
    const log = (o: object, m: string) => request.log.warn(o, m);
    const query = new URLSearchParams(url.slice(url.indexOf('?') + 1 || url.length));
    const intent = request.cookies[INTENT_COOKIE[planId === null ? 'portal' : 'plans']];
    const outcome = await login.finish(projectId.toLowerCase(), planId?.toLowerCase() ?? null, query, intent);
    if (outcome.kind === 'pay') return reply.header('cache-control', 'no-store').redirect(`${context.base}/pay/${encodeURIComponent(outcome.payLinkId)}`, 303);
    // The member's own portal link, opened at once by this browser: that open starts its session.
    if (outcome.kind === 'portal') return reply.header('cache-control', 'no-store').redirect(`${context.base}/portal/${encodeURIComponent(outcome.token)}`, 303);
    // The reason and the outcome only: never the query, whose hash is a bearer of the login.
    if (outcome.kind !== 'unknown-project' && outcome.kind !== 'no-member') log({ outcome: outcome.kind, reason: 'reason' in outcome ? outcome.reason : 'message' in outcome ? outcome.message : undefined }, 'a Telegram login was refused');
    if (outcome.kind === 'no-member') {
      const name = (await pages.page(outcome.projectId))?.project.name ?? 'this community';
      return messagePage(reply, context, 404, {
        title: 'No membership found',
        lines: [`We found no membership for this Telegram account in ${name}.`, 'If you bought with another Telegram account, log in with that one. To join, pick a plan.'],
        action: { href: plansPath(outcome.projectId), label: 'See the plans' },
      });
    }
    return refusedPage(reply, outcome, plansPath);
  };

  app.get<Params>('/p/:project_id/telegram/login/:plan_id', { config: { public: true }, schema: { hide: true } }, async (request, reply) =>
    callback(request.params.project_id, request.params.plan_id ?? '', request, reply),
  );
  app.get<Params>('/p/:project_id/telegram/login', { config: { public: true }, schema: { hide: true } }, async (request, reply) =>
    callback(request.params.project_id, null, request, reply),
  );

  function refusedPage(reply: FastifyReply, o: Exclude<TelegramLoginOutcome, { kind: 'pay' | 'portal' | 'no-member' }>, plans: (id: string) => string) {
    if (o.kind === 'unknown-project') return messagePage(reply, context, 404, NO_PROJECT);
    const [status, message] = refusal(o);
    return messagePage(reply, context, status, { ...message, action: { href: plans(o.projectId), label: 'Back to the plans' } });
  }
};

/** What a member is told when the widget's answer is refused; nothing was charged or changed in any of them. */
function refusal(o: Exclude<TelegramLoginOutcome, { kind: 'pay' | 'portal' | 'no-member' | 'unknown-project' }>): [number, Message] {
  switch (o.kind) {
    case 'not-configured':
      return [409, { title: 'Log in with Telegram is not set up', lines: ['This community has no Telegram bot connected, so we cannot check a Telegram login. Nothing was charged.', 'Please ask the community team how to join.'] }];
    case 'no-plan':
      return [404, { title: 'Plan not found', lines: ['This plan is no longer offered here, or is not sold on Telegram. Nothing was charged.'] }];
    case 'malformed':
    case 'bad-hash':
      return [400, { title: 'We could not check this login', lines: ['The answer from Telegram was incomplete or did not match, so we cannot tell who you are. Nothing was charged.', START_AGAIN] }];
    case 'stale':
      return [410, { title: 'This login has expired', lines: ['A login with Telegram must reach us within 10 minutes. Nothing was charged. If it keeps happening, check that your device’s clock is right.', START_AGAIN] }];
    case 'forged':
      return [400, { title: 'This login did not start here', lines: ['For your safety, a login with Telegram must finish in the browser that showed its button. Nothing was charged.', START_HERE] }];
    case 'replayed':
      return [410, { title: 'This login has already been used', lines: ['Each login with Telegram works once.', START_AGAIN] }];
    case 'no-pay-link':
      return [409, { title: 'This plan cannot be bought right now', lines: ['Nothing was charged. Please contact the community team.'] }];
  }
}
