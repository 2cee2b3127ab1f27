import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { PlatformError } from '../targets/target.view.js';
import type { Refreshed } from './discord-login.service.js';
import { GuildJoinJob, joinStandingOf, retryDelayMs, type ClaimedJoin, type JoinAnswer } from './guild-joins.js';

/** The guild join job on twins: what each of Discord's answers does to the join (docs/web.md, "After payment"). */

const NOW = new Date('2026-11-28T00:00:00.000Z');

function claimed(o: Partial<ClaimedJoin> = {}): ClaimedJoin {
  return {
    id: 'j1',
    projectId: 'p1',
    userId: '123456789012345678',
    attempt: 1,
    accessTokenSealed: 'sealed-member',
    tokenExpiresAt: new Date(NOW.getTime() + 86_400_000),
    botTokenSealed: 'sealed-bot',
    refreshTokenSealed: null,
    applicationId: null,
    clientSecretSealed: null,
    guildIds: ['111111111111111111', '222222222222222222'],
    ...o,
  };
}

async function run(join: ClaimedJoin, answers: JoinAnswer[], refreshed: Refreshed = { kind: 'refused', error: 'invalid_grant' }) {
  const written: string[] = [];
  const calls: string[] = [];
  let claims = 0;
  const job = new GuildJoinJob(
    {
      queue: { claim: async () => (claims++ === 0 ? [join] : []) },
      outcomes: {
        joined: async (j) => void written.push(`joined ${j.id}`),
        retry: async (id, next, error) => void written.push(`retry ${id} at +${(next.getTime() - NOW.getTime()) / 1000}s: ${error}`),
        failed: async (j, guildId, error: PlatformError) => void written.push(`failed ${j.id} in ${guildId}: ${error.code}`),
        dropped: async (id, reason) => void written.push(`dropped ${id}: ${reason}`),
        renewed: async (j, t) => void written.push(`renewed ${j.id}: ${t.accessTokenSealed} ${t.refreshTokenSealed} +${(t.expiresAt.getTime() - NOW.getTime()) / 1000}s`),
      },
      calls: {
        addMember: async (bot, guildId, userId, token) => {
          calls.push(`${bot} ${guildId} ${userId} ${token}`);
          return answers.shift() ?? { kind: 'added' };
        },
      },
      openToken: (sealed) => sealed.replace('sealed-', 'open-'),
      seal: (plain) => plain.replace('open-', 'sealed-'),
      oauth: {
        refresh: async (a) => {
          calls.push(`refresh ${a.clientId} ${a.clientSecret} ${a.refreshToken}`);
          return refreshed;
        },
      },
      clock: { now: () => NOW },
      logger: pino({ level: 'silent' }),
    },
    { pollMs: 60_000, batchSize: 10, leaseMs: 60_000, maxAttempts: 3 },
  );
  job.wake();
  await job.idle();
  await job.stop();
  return { written, calls };
}

describe('guild join job', () => {
  it('adds the member to each guild with their token and the bot’s, then the join is done', async () => {
    const { written, calls } = await run(claimed(), [{ kind: 'added' }, { kind: 'member' }]);
    expect(calls).toStrictEqual(['open-bot 111111111111111111 123456789012345678 open-member', 'open-bot 222222222222222222 123456789012345678 open-member']);
    expect(written).toStrictEqual(['joined j1']);
  });

  it('a refusal fails the join in that guild, and the next guild is not asked', async () => {
    const { written, calls } = await run(claimed(), [{ kind: 'refused', error: { code: '40007', message: 'The user is banned from this guild.' } }]);
    expect(calls).toHaveLength(1);
    expect(written).toStrictEqual(['failed j1 in 111111111111111111: 40007']);
  });

  it('a 5xx or a rate limit is retried after the backoff (at least retry_after), then fails once the attempts are spent', async () => {
    expect((await run(claimed(), [{ kind: 'retry', error: '502: Bad Gateway' }])).written).toStrictEqual(['retry j1 at +10s: 502: Bad Gateway']);
    expect((await run(claimed({ attempt: 2 }), [{ kind: 'retry', error: '429: limited', retryAfterMs: 45_000 }])).written).toStrictEqual(['retry j1 at +45s: 429: limited']);
    expect((await run(claimed({ attempt: 3 }), [{ kind: 'retry', error: '500: x' }])).written).toStrictEqual(['failed j1 in 111111111111111111: retries_exhausted']);
    expect([1, 2, 3, 10, 20].map(retryDelayMs)).toStrictEqual([10_000, 20_000, 40_000, 600_000, 600_000]);
  });

  it('an expired member token is renewed with their refresh token (kept sealed), then used', async () => {
    const join = claimed({ tokenExpiresAt: new Date(NOW.getTime() - 1), refreshTokenSealed: 'sealed-refresh', applicationId: 'app1', clientSecretSealed: 'sealed-secret' });
    const { written, calls } = await run(join, [], { kind: 'ok', accessToken: 'open-new', refreshToken: 'open-newrefresh', expiresInSeconds: 604_800 });
    expect(calls[0]).toBe('refresh app1 open-secret open-refresh');
    expect(calls[1]).toBe('open-bot 111111111111111111 123456789012345678 open-new');
    expect(written).toStrictEqual(['renewed j1: sealed-new sealed-newrefresh +604800s', 'joined j1']);
    const refused = await run(join, []);
    expect(refused.written).toStrictEqual(['failed j1 in 111111111111111111: oauth_token_expired']);
    expect(refused.calls).toStrictEqual(['refresh app1 open-secret open-refresh']);
  });

  it('an expired member token without a refresh token fails without a call; no bot or no guild drops the join', async () => {
    const expired = await run(claimed({ tokenExpiresAt: new Date(NOW.getTime() - 1) }), []);
    expect(expired).toStrictEqual({ written: ['failed j1 in 111111111111111111: oauth_token_expired'], calls: [] });
    expect((await run(claimed({ botTokenSealed: null }), [])).written).toStrictEqual(['dropped j1: no Discord bot is connected']);
    expect((await run(claimed({ guildIds: [] }), [])).written).toStrictEqual(['dropped j1: the plan grants no Discord target']);
  });
});

describe('where a join stands, for the done page', () => {
  it('reads the join’s state, and the Discord code a member can act on from a failure', () => {
    expect(joinStandingOf(null)).toBeNull();
    expect(joinStandingOf({ state: 'pending', lastError: null })).toStrictEqual({ kind: 'joining' });
    expect(joinStandingOf({ state: 'pending', lastError: '503: Service Unavailable' })).toStrictEqual({ kind: 'joining' });
    expect(joinStandingOf({ state: 'joined', lastError: null })).toStrictEqual({ kind: 'joined' });
    expect(joinStandingOf({ state: 'failed', lastError: '30001: Maximum number of guilds reached (100)' })).toStrictEqual({ kind: 'failed', reason: 'too-many-guilds' });
    expect(joinStandingOf({ state: 'failed', lastError: '40007: The user is banned from this guild.' })).toStrictEqual({ kind: 'failed', reason: 'banned' });
    expect(joinStandingOf({ state: 'failed', lastError: '50013: Missing Permissions' })).toStrictEqual({ kind: 'failed', reason: 'bot-cannot-invite' });
    for (const lastError of ['50025: Invalid OAuth2 access token', 'oauth_token_expired: expired', 'no Discord bot is connected', null]) {
      expect(joinStandingOf({ state: 'failed', lastError })).toStrictEqual({ kind: 'failed', reason: 'other' });
    }
  });
});
