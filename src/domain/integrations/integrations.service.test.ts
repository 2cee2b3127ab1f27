import { describe, expect, it } from 'vitest';
import type { Connection, IntegrationRecord } from '../../store/integrations.store.js';
import { IntegrationsService, type BotTokenCheck, type IntegrationStatements, type TokenVerdict } from './integrations.service.js';
import { SecretBox } from './secret-box.js';

/**
 * The order of a connection, with the store, the platform and the planner replaced by recorders:
 * the token is checked before anything is stored, nothing is stored unless the platform names a
 * bot, and the project is planned only after the connection is stored.
 */

const PROJECT = '7c1f6a7e-2d1b-4a59-8a55-3a7c9a6b8e10';
const TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.GAbCdE.abcdefghijklmnop';
const clock = { now: () => new Date('2026-01-12T10:32:27.560Z') };

/** A store twin with the statements a case uses; any other one fails the case. */
function storeWith(used: Partial<IntegrationStatements>): IntegrationStatements {
  const unexpected = (name: string) => () => Promise.reject(new Error(`unexpected ${name}`));
  return { connect: unexpected('connect'), status: unexpected('status'), delete: unexpected('delete'), chatsToCheck: unexpected('chatsToCheck'), ...used };
}

function setup(o: { verdict?: TokenVerdict; stored?: boolean; box?: SecretBox | null } = {}) {
  const log: string[] = [];
  const connections: Connection[] = [];
  const store = storeWith({
    async connect(c: Connection, now: Date): Promise<IntegrationRecord | null> {
      log.push('store');
      connections.push(c);
      if (o.stored === false) return null;
      return { platform: c.platform, botId: c.botId, botName: c.botName, connectedAt: now.toISOString(), health: 'ok', lastError: null, generation: 1 };
    },
  });
  const check: BotTokenCheck = {
    label: 'Discord',
    normalize: (raw) => (raw.trim() === '' ? { problem: 'bot_token must not be empty' } : { token: raw.trim() }),
    async verify(token) {
      log.push(`verify ${token}`);
      return o.verdict ?? { ok: true, botId: '42', botName: 'Gatekeeper' };
    },
  };
  const planner = {
    async planProject(projectId: string) {
      log.push(`plan ${projectId}`);
    },
  };
  const box = o.box === undefined ? SecretBox.ephemeral() : o.box;
  const service = new IntegrationsService(store, box, { discord: check }, planner, clock);
  return { service, log, connections, box };
}

describe('IntegrationsService.connect', () => {
  it('checks the token, stores it sealed, then plans the project', async () => {
    const { service, log, connections, box } = setup();
    const result = await service.connect(PROJECT, 'discord', ` ${TOKEN} `);
    expect(result).toStrictEqual({
      ok: true,
      value: { platform: 'discord', bot_id: '42', bot_name: 'Gatekeeper', connected_at: '2026-01-12T10:32:27.560Z', health: 'ok', last_error: null },
    });
    expect(log).toStrictEqual([`verify ${TOKEN}`, 'store', `plan ${PROJECT}`]);
    const [stored] = connections;
    expect(stored).toMatchObject({ projectId: PROJECT, platform: 'discord', botId: '42', botName: 'Gatekeeper' });
    expect(stored!.botTokenSealed).not.toContain(TOKEN);
    expect(box!.open(stored!.botTokenSealed)).toBe(TOKEN);
  });

  it('refuses a token the platform refuses with a 422, storing nothing and planning nothing', async () => {
    const { service, log } = setup({ verdict: { ok: false, refused: true, message: 'Discord refused bot_token' } });
    const result = await service.connect(PROJECT, 'discord', TOKEN);
    expect(result.ok || [result.error.code, result.error.message]).toStrictEqual(['VALIDATION_ERROR', 'Discord refused bot_token']);
    expect(log).toStrictEqual([`verify ${TOKEN}`]);
  });

  it('answers 503 with the wait the platform named when it could not be asked, storing nothing', async () => {
    const { service, log } = setup({ verdict: { ok: false, refused: false, message: 'Discord is rate limiting', retryAfterSeconds: 7 } });
    const result = await service.connect(PROJECT, 'discord', TOKEN);
    expect(result.ok || [result.error.code, result.error.status, result.error.retryAfter]).toStrictEqual(['SERVICE_UNAVAILABLE', 503, 7]);
    expect(log).toStrictEqual([`verify ${TOKEN}`]);
  });

  it('refuses a malformed token with a 422 without asking the platform', async () => {
    const { service, log } = setup();
    const result = await service.connect(PROJECT, 'discord', '   ');
    expect(result.ok || [result.error.code, result.error.message]).toStrictEqual(['VALIDATION_ERROR', 'bot_token must not be empty']);
    expect(log).toStrictEqual([]);
  });

  it('answers 503 naming TENURE_ENCRYPTION_KEY when the instance has no key, without asking the platform', async () => {
    const { service, log } = setup({ box: null });
    const result = await service.connect(PROJECT, 'discord', TOKEN);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(result.error.message).toContain('Set TENURE_ENCRYPTION_KEY');
    expect(log).toStrictEqual([]);
  });

  it('answers 409 when the store finds the bot connected elsewhere, and plans nothing', async () => {
    const { service, log } = setup({ stored: false });
    const result = await service.connect(PROJECT, 'discord', TOKEN);
    expect(result.ok || result.error.code).toBe('CONFLICT');
    expect(log).toStrictEqual([`verify ${TOKEN}`, 'store']);
  });
});

describe('IntegrationsService.status', () => {
  const record = { platform: 'telegram', botId: '42', botName: 'door_bot', connectedAt: '2026-01-12T10:32:27.560Z', health: 'ok', lastError: null, generation: 1 } as const;
  const chats = [
    { targetId: 't1', targetName: 'Group', chatId: '-100123' },
    { targetId: 't2', targetName: 'Channel', chatId: '@news' },
  ];

  function setupStatus(o: { withRights: boolean; sealedBy?: SecretBox }) {
    const box = SecretBox.ephemeral();
    const asked: unknown[] = [];
    const store = storeWith({
      async status() {
        return { ...record, unhealthyTargets: [], accessByState: {}, commandsError: null, webLogin: false };
      },
      async chatsToCheck(projectId: string, platform: string, limit: number) {
        asked.push(['chatsToCheck', projectId, platform, limit]);
        return { botId: '42', botTokenSealed: (o.sealedBy ?? box).seal(TOKEN), chats };
      },
    });
    const check: BotTokenCheck = {
      label: 'Telegram',
      normalize: (raw) => ({ token: raw }),
      verify: async () => ({ ok: true, botId: '42', botName: 'door_bot' }),
      ...(o.withRights
        ? {
            async chatRights(token, botId, list) {
              asked.push(['chatRights', token, botId, list]);
              return [
                { isAdmin: true, canInviteUsers: true, canRestrictMembers: false, error: null },
                { isAdmin: false, canInviteUsers: false, canRestrictMembers: false, error: { code: '400', message: 'Bad Request: chat not found' } },
              ];
            },
          }
        : {}),
    };
    const service = new IntegrationsService(store, box, { telegram: check }, { planProject: async () => undefined }, clock);
    return { service, asked };
  }

  const base = {
    platform: 'telegram',
    bot_id: '42',
    bot_name: 'door_bot',
    connected_at: record.connectedAt,
    health: 'ok',
    last_error: null,
    targets: [],
    access: { synced: 0, pending: 0, waiting_for_member: 0, failed: 0 },
  };

  it('asks a platform with chatRights about the first 50 target chats, with the opened token, and shows each', async () => {
    const { service, asked } = setupStatus({ withRights: true });
    const result = await service.status(PROJECT, 'telegram');
    expect(result).toStrictEqual({
      ok: true,
      value: {
        ...base,
        chats: [
          { target_id: 't1', target_name: 'Group', chat_id: '-100123', is_admin: true, can_invite_users: true, can_restrict_members: false, error: null },
          {
            target_id: 't2',
            target_name: 'Channel',
            chat_id: '@news',
            is_admin: false,
            can_invite_users: false,
            can_restrict_members: false,
            error: { code: '400', message: 'Bad Request: chat not found' },
          },
        ],
      },
    });
    expect(asked).toStrictEqual([
      ['chatsToCheck', PROJECT, 'telegram', 50],
      ['chatRights', TOKEN, '42', chats],
    ]);
  });

  it('shows no chats for a platform without chatRights, and reads no token', async () => {
    const { service, asked } = setupStatus({ withRights: false });
    expect(await service.status(PROJECT, 'telegram')).toStrictEqual({ ok: true, value: base });
    expect(asked).toStrictEqual([]);
  });

  it('a token sealed under another key is each chat’s error, and the platform is not asked', async () => {
    const { service, asked } = setupStatus({ withRights: true, sealedBy: SecretBox.ephemeral() });
    const result = await service.status(PROJECT, 'telegram');
    if (!result.ok) throw result.error;
    expect(result.value.chats!.map((c) => [c.is_admin, c.error?.code])).toStrictEqual([
      [false, 'token_unreadable'],
      [false, 'token_unreadable'],
    ]);
    expect(result.value.chats![0]!.error!.message).toMatch(/^The stored bot token cannot be opened \(sealed under another encryption key .*\); connect the bot again$/);
    expect(asked.map((a) => (a as unknown[])[0])).toStrictEqual(['chatsToCheck']);
  });
});
