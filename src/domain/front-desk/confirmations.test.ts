import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { backoffMs, ConfirmationJob, MAX_ATTEMPTS, messageOf, type ClaimedConfirmation, type SendOutcome } from './confirmations.js';
import type { LinkButton, Voice } from '../lifecycle/member-messages.js';

/**
 * The confirmations job on twins (src/domain/front-desk/confirmations.ts): what each platform answer
 * does to the row, the message's words, and the bounded backoff.
 */

const NOW = new Date('2030-01-01T00:00:00.000Z');
const VOICE: Voice = { language: 'en', timeZone: 'UTC', dateFormat: 'YYYY-MM-DD', timeFormat: '24h', messages: {} };
const text = (c: ClaimedConfirmation) => messageOf(c, null).text;

function claimed(o: Partial<ClaimedConfirmation> = {}): ClaimedConfirmation {
  return {
    id: 'n1',
    kind: 'confirmation',
    projectId: 'p',
    userId: '42',
    platform: 'discord',
    attempt: 1,
    name: null,
    planName: 'Gold',
    planId: 'gold',
    recurring: false,
    endDate: new Date('2026-12-27T10:00:00.000Z'),
    active: true,
    trial: false,
    cancelAtPeriodEnd: false,
    writtenFor: null,
    createdAt: NOW,
    bot: 'held',
    invites: [],
    carried: [],
    invite: null,
    voice: VOICE,
    quietHours: null,
    ...o,
  };
}

async function run(row: ClaimedConfirmation, outcome: SendOutcome) {
  const writes: string[] = [];
  const sentTexts: string[] = [];
  const sentButtons: LinkButton[][] = [];
  let claims = 0;
  const job = new ConfirmationJob(
    {
      queue: {
        claim: (owners) => {
          expect(owners).toStrictEqual(['worker-1']);
          return Promise.resolve(claims++ === 0 ? [row] : []);
        },
      },
      outcomes: {
        sent: (id, _now, carried) => Promise.resolve(void writes.push(`sent ${id}${carried.length > 0 ? ` dropping ${carried.join(' ')}` : ''}`)),
        retry: (id, next, error) => Promise.resolve(void writes.push(`retry ${id} ${next.getTime() - NOW.getTime()} ${error}`)),
        finish: (id, state, error) => Promise.resolve(void writes.push(`${state} ${id} ${error}`)),
        giveBack: (id, at, error) => Promise.resolve(void writes.push(`given back ${id} ${at.getTime() - NOW.getTime()} ${error}`)),
        unreachable: (n, reason) => Promise.resolve(writes.push(`unreachable ${n.id} ${reason}`) > 0),
        hold: (id, until, why) => Promise.resolve(void writes.push(`held ${id} until ${until.toISOString()} ${why}`)),
      },
      channel: {
        owners: ['worker-1'],
        send: (to, text, buttons) => {
          expect(to).toMatchObject({ platform: row.platform, projectId: row.projectId, userId: row.userId });
          sentTexts.push(text);
          if (buttons.length > 0) sentButtons.push([...buttons]);
          return Promise.resolve(outcome);
        },
      },
      clock: { now: () => NOW },
      logger: pino({ level: 'silent' }),
      links: {
        renew: (_p, user, plan) => Promise.resolve(`https://t.example/pay/${plan}-${user}`),
        billing: (_p, user) => Promise.resolve(`https://t.example/portal/${user}`),
      },
    },
    { pollMs: 60_000, leaseMs: 60_000, batchSize: 10, inviteWaitMs: 0 },
  );
  job.wake();
  await job.idle();
  await job.stop();
  return { writes, sentTexts, ...(sentButtons.length > 0 ? { sentButtons } : {}) };
}

describe('ConfirmationJob', () => {
  it('records each answer: sent, unreachable, retried after Retry-After or the backoff, given up after the last attempt, refused', async () => {
    expect((await run(claimed(), { kind: 'sent' })).writes).toStrictEqual(['sent n1']);
    expect((await run(claimed(), { kind: 'unreachable', reason: 'dm_closed', error: '403' })).writes).toStrictEqual(['unreachable n1 dm_closed']);
    expect((await run(claimed(), { kind: 'retry', error: '429', retryAfterMs: 7_000 })).writes).toStrictEqual(['retry n1 7000 429']);
    expect((await run(claimed({ attempt: 2 }), { kind: 'retry', error: '502' })).writes).toStrictEqual(['retry n1 30000 502']);
    expect((await run(claimed({ attempt: MAX_ATTEMPTS }), { kind: 'retry', error: '502' })).writes).toStrictEqual(['failed n1 502']);
    expect((await run(claimed(), { kind: 'failed', error: '404: 10013 Unknown User' })).writes).toStrictEqual(['failed n1 404: 10013 Unknown User']);
  });

  it('a bot let go while its message was out gives the row back, due at once, for its next holder; never failed', async () => {
    const lost = await run(claimed({ attempt: MAX_ATTEMPTS }), { kind: 'released', error: "the bot's lease was lost while the message was out" });
    expect(lost.writes).toStrictEqual(["given back n1 0 the bot's lease was lost while the message was out"]);
  });

  it('sends nothing for a membership no longer active, without a bot, or with a bot whose token was refused', async () => {
    const ended = await run(claimed({ active: false }), { kind: 'sent' });
    expect(ended).toStrictEqual({ writes: ['dropped n1 the membership is no longer active'], sentTexts: [] });
    const noBot = await run(claimed({ bot: null }), { kind: 'sent' });
    expect(noBot).toStrictEqual({ writes: ['dropped n1 no discord bot is connected'], sentTexts: [] });
    const refused = await run(claimed({ bot: 'unhealthy' }), { kind: 'sent' });
    expect(refused).toStrictEqual({ writes: ['failed n1 the discord bot token was refused: connect the bot again'], sentTexts: [] });
  });

  it('a job stopping while it sends finishes that message and gives the rest of its claim back at once', async () => {
    const writes: string[] = [];
    let claims = 0;
    let stopping: Promise<void> | null = null;
    const job: ConfirmationJob = new ConfirmationJob(
      {
        queue: { claim: () => Promise.resolve(claims++ === 0 ? [claimed({ id: 'n1' }), claimed({ id: 'n2' })] : []) },
        outcomes: {
          sent: (id) => Promise.resolve(void writes.push(`sent ${id}`)),
          retry: () => Promise.resolve(),
          finish: () => Promise.resolve(),
          giveBack: (id, _at, error) => Promise.resolve(void writes.push(`given back ${id} ${error}`)),
          unreachable: () => Promise.resolve(false),
          hold: () => Promise.resolve(),
        },
        channel: {
          owners: ['worker-1'],
          send: () => {
            stopping = job.stop();
            return Promise.resolve({ kind: 'sent' });
          },
        },
        clock: { now: () => NOW },
        logger: pino({ level: 'silent' }),
      },
      { pollMs: 60_000, leaseMs: 60_000, batchSize: 10, inviteWaitMs: 0 },
    );
    job.wake();
    await job.idle();
    await stopping;
    expect(writes).toStrictEqual(['sent n1', 'given back n2 the worker stopped before sending it']);
  });

  it('says what they got, until when, and what to do next; a Telegram message carries the invite link', () => {
    expect(text(claimed())).toBe("You're in! Your Gold membership is active until 2026-12-27 10:00 UTC. Use /memberships to check it any time.");
    expect(text(claimed({ platform: 'telegram', invites: ['https://t.me/+abc'] }))).toBe(
      "You're in! Your Gold membership is active until 2026-12-27 10:00 UTC. Join here (this link is yours alone and works once): https://t.me/+abc Send /status to check it any time.",
    );
    expect(text(claimed({ platform: 'telegram', invites: ['https://t.me/+a', 'https://t.me/+b'] }))).toContain('Join here (these links are yours alone and work once): https://t.me/+a https://t.me/+b Send');
    expect(text(claimed({ platform: 'telegram' }))).toBe("You're in! Your Gold membership is active until 2026-12-27 10:00 UTC. Send /status to check it any time.");
  });

  it('a sent confirmation drops the invite rows it carried; an invite row sends its link alone, or nothing once the link is gone', async () => {
    const carrying = claimed({ platform: 'telegram', invites: ['https://t.me/+abc'], carried: ['i1'] });
    expect((await run(carrying, { kind: 'sent' })).writes).toStrictEqual(['sent n1 dropping i1']);
    expect((await run(carrying, { kind: 'retry', error: '502' })).writes).toStrictEqual(['retry n1 5000 502']);
    const invite = { link: 'https://t.me/+abc', chatName: 'VIP', expiresAt: new Date('2030-01-02T10:00:00.000Z'), joinRequest: false };
    const alone = await run(claimed({ kind: 'invite', platform: 'telegram', planName: null, invite }), { kind: 'sent' });
    expect(alone).toStrictEqual({ writes: ['sent n1'], sentTexts: [text(claimed({ kind: 'invite', platform: 'telegram', invite }))] });
    const gone = await run(claimed({ kind: 'invite', platform: 'telegram', invite: null }), { kind: 'sent' });
    expect(gone).toStrictEqual({ writes: ['dropped n1 the link was used, revoked or expired before it was sent'], sentTexts: [] });
  });

  it('an invite link of its own says where it leads, that it is theirs alone, and when it expires', () => {
    const invite = { link: 'https://t.me/+abc', chatName: 'VIP', expiresAt: new Date('2030-01-02T10:00:00.000Z'), joinRequest: false };
    expect(text(claimed({ kind: 'invite', platform: 'telegram', invite }))).toBe(
      'Here is your invite link to VIP: https://t.me/+abc It is yours alone, works once and expires 2030-01-02 10:00 UTC. Send /status to check your membership any time.',
    );
    expect(text(claimed({ kind: 'invite', platform: 'telegram', invite: { ...invite, joinRequest: true } }))).toBe(
      'Here is your invite link to VIP: https://t.me/+abc It is yours alone and expires 2030-01-02 10:00 UTC. Send /status to check your membership any time.',
    );
  });

  it('backs off 5 s, 30 s, 2 min, 10 min, then 30 min', () => {
    expect([1, 2, 3, 4, 5, 6].map(backoffMs)).toStrictEqual([5_000, 30_000, 120_000, 600_000, 1_800_000, 1_800_000]);
  });
});

describe('ConfirmationJob: reminders before the end', () => {
  const END = new Date('2030-01-02T10:00:00.000Z');
  const reminder = (c: Partial<ClaimedConfirmation> = {}) => claimed({ kind: 'reminder', endDate: END, writtenFor: END, ...c });

  it('a one-time plan gets a Renew button (a pay link for the same plan), a recurring one Manage billing', async () => {
    expect(await run(reminder(), { kind: 'sent' })).toStrictEqual({
      writes: ['sent n1'],
      sentTexts: ['Your Gold membership ends on 2030-01-02 10:00 UTC.'],
      sentButtons: [[{ label: 'Renew', url: 'https://t.example/pay/gold-42' }]],
    });
    const berlin = { ...VOICE, timeZone: 'Europe/Berlin', dateFormat: 'DD.MM.YYYY' };
    expect(await run(reminder({ recurring: true, voice: berlin }), { kind: 'sent' })).toMatchObject({
      sentTexts: ['Your Gold membership renews on 02.01.2030 11:00 CET.'],
      sentButtons: [[{ label: 'Manage billing', url: 'https://t.example/portal/42' }]],
    });
    expect((await run(reminder({ recurring: true, trial: true }), { kind: 'sent' })).sentTexts).toStrictEqual([
      'Your Gold trial ends on 2030-01-02 10:00 UTC; your subscription starts then unless you cancel it.',
    ]);
  });

  it('in the project\'s language, and in the owner\'s words when they wrote some', async () => {
    const de = { ...VOICE, language: 'de', timeZone: 'Europe/Berlin', dateFormat: 'DD.MM.YYYY' };
    expect(await run(reminder({ voice: de }), { kind: 'sent' })).toMatchObject({
      sentTexts: ['Deine Mitgliedschaft Gold endet am 02.01.2030 11:00 MEZ.'],
      sentButtons: [[{ label: 'Verlängern', url: 'https://t.example/pay/gold-42' }]],
    });
    const own = { ...VOICE, messages: { reminder: { enabled: true, text: { en: 'Hey {name}, {plan} ends {end_date}: {link}' } } } };
    expect((await run(reminder({ voice: own, name: 'Ana' }), { kind: 'sent' })).sentTexts).toStrictEqual(['Hey Ana, Gold ends 2030-01-02 10:00 UTC: https://t.example/pay/gold-42']);
  });

  it('drops a reminder of another end date, of a membership ended or deleted, or turned off, without a call', async () => {
    expect(await run(reminder({ writtenFor: new Date('2029-12-30T10:00:00.000Z') }), { kind: 'sent' })).toStrictEqual({
      writes: ['dropped n1 the membership ends at another date now'],
      sentTexts: [],
    });
    expect((await run(reminder({ active: false }), { kind: 'sent' })).writes).toStrictEqual(['dropped n1 the membership ended or was deleted']);
    expect((await run(reminder({ planName: null, endDate: null }), { kind: 'sent' })).writes).toStrictEqual(['dropped n1 the membership ended or was deleted']);
    const off = { ...VOICE, messages: { reminder: { enabled: false, text: null } } };
    expect(await run(reminder({ voice: off }), { kind: 'sent' })).toStrictEqual({
      writes: ["dropped n1 the reminder message is turned off in the project's messages setting"],
      sentTexts: [],
    });
  });

  it('a membership without a plan is reminded too, without a button (there is no plan to pay for)', async () => {
    expect(await run(reminder({ planId: null, planName: null }), { kind: 'sent' })).toStrictEqual({
      writes: ['sent n1'],
      sentTexts: ['Your membership ends on 2030-01-02 10:00 UTC. Use /memberships to check it any time.'],
    });
  });

  it('holds a reminder through quiet hours (midnight in the project\'s zone is inside 22:00-08:00)', async () => {
    // NOW is 2030-01-01 00:00 UTC, 01:00 in Berlin: held until 08:00 there, 07:00 UTC.
    const berlin = { ...VOICE, timeZone: 'Europe/Berlin' };
    expect(await run(reminder({ quietHours: '22:00-08:00', voice: berlin }), { kind: 'sent' })).toStrictEqual({
      writes: ['held n1 until 2030-01-01T07:00:00.000Z quiet hours'],
      sentTexts: [],
    });
    expect((await run(reminder({ quietHours: '09:00-17:00', voice: berlin }), { kind: 'sent' })).writes).toStrictEqual(['sent n1']);
  });
});

describe('ConfirmationJob: the other moments', () => {
  const END = new Date('2030-01-20T10:00:00.000Z');

  it('welcome: what they got and until when; dropped once the membership ended', async () => {
    expect((await run(claimed({ kind: 'welcome', endDate: END }), { kind: 'sent' })).sentTexts).toStrictEqual([
      'Welcome! Your Gold membership is active until 2030-01-20 10:00 UTC. Use /memberships to check it any time.',
    ]);
    expect((await run(claimed({ kind: 'welcome', active: false }), { kind: 'sent' })).writes).toStrictEqual(['dropped n1 the membership is no longer active']);
  });

  it('expired: a Renew button for the same plan; dropped when the membership is active again or was deleted', async () => {
    const ended = new Date('2029-12-31T10:00:00.000Z');
    expect(await run(claimed({ kind: 'expired', active: false, endDate: ended, writtenFor: ended }), { kind: 'sent' })).toMatchObject({
      sentTexts: ['Your Gold membership has ended.'],
      sentButtons: [[{ label: 'Renew', url: 'https://t.example/pay/gold-42' }]],
    });
    expect((await run(claimed({ kind: 'expired', active: true, endDate: END, writtenFor: ended }), { kind: 'sent' })).writes).toStrictEqual(['dropped n1 the membership is active again']);
    expect((await run(claimed({ kind: 'expired', active: false, endDate: null, writtenFor: ended }), { kind: 'sent' })).writes).toStrictEqual(['dropped n1 the membership was deleted']);
  });

  it('payment failed: Manage billing, and access kept until the later of the end date and the grace period', async () => {
    const failedAt = new Date('2029-12-31T12:00:00.000Z');
    const c = claimed({ kind: 'payment_failed', endDate: new Date('2030-01-01T10:00:00.000Z'), createdAt: failedAt, recurring: true });
    expect(messageOf(c, 'https://t.example/billing', 3 * 86_400_000)).toStrictEqual({
      text: 'The payment renewing your Gold membership failed. You keep access until 2030-01-03 12:00 UTC while it is tried again: update your card to keep it.',
      buttons: [{ label: 'Manage billing', url: 'https://t.example/billing' }],
    });
  });

  it('cancelled: access until the end; dropped once the renewal is resumed', async () => {
    expect((await run(claimed({ kind: 'cancelled', endDate: END, cancelAtPeriodEnd: true, recurring: true }), { kind: 'sent' })).sentTexts).toStrictEqual([
      'Your Gold membership will not renew. You keep access until 2030-01-20 10:00 UTC. Use /memberships to check it any time.',
    ]);
    expect((await run(claimed({ kind: 'cancelled', endDate: END, cancelAtPeriodEnd: false }), { kind: 'sent' })).writes).toStrictEqual(['dropped n1 the renewal was resumed']);
  });
});
