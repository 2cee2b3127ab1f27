import { discord, telegram, type BotPlatform } from './integrations.js';
import type { Operation } from './operations.js';

/**
 * The bot connection routes (Discord and Telegram), described for the shared security and
 * transport generators (test/support/security.ts, transport.ts) and the OpenAPI conformance test.
 * Each request connects a new bot of the harness's fake Discord or fake Telegram.
 */

/** PUT (connect), GET (status) and DELETE (disconnect) of `p`'s route; GET and DELETE find a bot connected. */
function connectionOperations(p: BotPlatform): [connect: Operation, status: Operation, disconnect: Operation] {
  const name = (method: string) => `${method} /v2/projects/{project_id}/integrations/${p.name}`;
  const route = { successStatus: 200, allow: 'GET, PUT, DELETE' } as const;
  const connected: Operation['prepare'] = async (h, t) => {
    await p.connect(t, p.addBot(h));
    return { url: p.path(t) };
  };
  return [
    {
      ...route,
      name: name('PUT'),
      method: 'PUT',
      prepare: async (h, t) => ({ url: p.path(t), payload: { bot_token: p.addBot(h).token } }),
      invalidPayload: { bot_token: 42 },
      wrongMethod: 'POST',
    },
    { ...route, name: name('GET'), method: 'GET', prepare: connected, wrongMethod: 'PATCH' },
    { ...route, name: name('DELETE'), method: 'DELETE', prepare: connected, wrongMethod: 'POST' },
  ];
}

export const [discordConnect, discordStatus, discordDisconnect] = connectionOperations(discord);
export const [telegramConnect, telegramStatus, telegramDisconnect] = connectionOperations(telegram);
