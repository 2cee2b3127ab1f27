import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Delivery, TelegramWebhookService } from '../../../domain/integrations/telegram-webhook.service.js';
import type { TelegramBotKey } from '../../../store/telegram-updates.store.js';
import { sendSuccess } from '../../envelope.js';
import { unwrap } from '../../result.js';
import { receiveTelegramUpdateSchema } from './telegram-updates.schemas.js';

const MESSAGES: Readonly<Record<Delivery['result'], string>> = {
  stored: 'Update stored',
  duplicate: 'Update received already',
  ignored: 'Update ignored: tenure asks only for chat_member, chat_join_request, my_chat_member, and messages and button presses in the bot’s private chats',
};

/**
 * `POST /telegram/updates/{project_id}`: where Telegram posts a project's bot's updates when
 * TENURE_TELEGRAM_UPDATES=webhook (docs/access-telegram.md). No API key (Telegram has none):
 * the delivery carries the bot's secret token instead, checked before the body is read, so a
 * request without it gets a 401 and stores nothing. Bounded per project, not by IP (docs/rate-limits.md,
 * "Platform callbacks").
 */
export const telegramUpdatesRoutes: FastifyPluginAsyncTypebox<{ telegramWebhook: TelegramWebhookService }> = async (app, { telegramWebhook }) => {
  const bots = new WeakMap<FastifyRequest, TelegramBotKey>();

  app.post(
    '/telegram/updates/:project_id',
    {
      schema: receiveTelegramUpdateSchema,
      config: { public: true, callback: { platform: 'telegram', endpoint: 'project_id' } },
      onRequest: async (request) => {
        const { project_id } = request.params as { project_id: string };
        bots.set(request, unwrap(await telegramWebhook.authenticate(project_id, request.headers['x-telegram-bot-api-secret-token'])));
      },
    },
    async (request, reply) => {
      const delivery = unwrap(await telegramWebhook.receive(bots.get(request)!, request.body));
      return sendSuccess(reply, 200, { message: MESSAGES[delivery.result], data: delivery });
    },
  );
};
