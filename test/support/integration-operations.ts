import { addBot, addTelegramBot, connectBot, connectTelegramBot, discordPath, telegramPath } from './bots.js';
import type { Operation } from './operations.js';

/**
 * The bot connection routes (Discord and Telegram), described for the shared security and
 * transport generators (test/support/security.ts, transport.ts) and the OpenAPI conformance test.
 * Each request connects a new bot of the harness's fake Discord or fake Telegram.
 */

export const discordConnect: Operation = {
  name: 'PUT /v2/projects/{project_id}/integrations/discord',
  method: 'PUT',
  successStatus: 200,
  async prepare(h, t) {
    return { url: discordPath(t), payload: { bot_token: addBot(h.discord).token } };
  },
  invalidPayload: { bot_token: 42 },
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'POST',
};

export const discordStatus: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/discord',
  method: 'GET',
  successStatus: 200,
  async prepare(h, t) {
    await connectBot(t, addBot(h.discord));
    return { url: discordPath(t) };
  },
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'PATCH',
};

export const discordDisconnect: Operation = {
  name: 'DELETE /v2/projects/{project_id}/integrations/discord',
  method: 'DELETE',
  successStatus: 200,
  async prepare(h, t) {
    await connectBot(t, addBot(h.discord));
    return { url: discordPath(t) };
  },
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'POST',
};

export const telegramConnect: Operation = {
  name: 'PUT /v2/projects/{project_id}/integrations/telegram',
  method: 'PUT',
  successStatus: 200,
  async prepare(h, t) {
    return { url: telegramPath(t), payload: { bot_token: addTelegramBot(h.telegram).token } };
  },
  invalidPayload: { bot_token: 42 },
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'POST',
};

export const telegramStatus: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/telegram',
  method: 'GET',
  successStatus: 200,
  async prepare(h, t) {
    await connectTelegramBot(t, addTelegramBot(h.telegram));
    return { url: telegramPath(t) };
  },
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'PATCH',
};

export const telegramDisconnect: Operation = {
  name: 'DELETE /v2/projects/{project_id}/integrations/telegram',
  method: 'DELETE',
  successStatus: 200,
  async prepare(h, t) {
    await connectTelegramBot(t, addTelegramBot(h.telegram));
    return { url: telegramPath(t) };
  },
  allow: 'GET, PUT, DELETE',
  wrongMethod: 'POST',
};
