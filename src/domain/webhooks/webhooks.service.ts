import { randomBytes } from 'node:crypto';
import type { WebhooksStore } from '../../store/webhooks.store.js';
import { fail, ok, type Result } from '../errors.js';

export interface CreatedWebhook {
  id: string;
  url: string;
  secret: string;
}

const MAX_URL_LENGTH = 2048;

/** Checks a webhook destination: an absolute http(s) URL; plain http only where private targets are allowed. */
export function checkWebhookUrl(url: string, allowPlainHttp: boolean): string | null {
  if (url.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  if (!URL.canParse(url)) return 'url must be an absolute http or https URL';
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'url must be an absolute http or https URL';
  if (parsed.protocol === 'http:' && !allowPlainHttp) return 'url must use https';
  if (parsed.username || parsed.password) return 'url must not contain credentials';
  return null;
}

export class WebhooksService {
  constructor(
    private readonly store: WebhooksStore,
    private readonly options: { allowPrivate: boolean },
  ) {}

  /** Spec 4.3. The secret (64 lowercase hex) is returned here; deliveries are signed with it. */
  async create(projectId: string, url: string): Promise<Result<CreatedWebhook>> {
    const problem = checkWebhookUrl(url, this.options.allowPrivate);
    if (problem) return fail('VALIDATION_ERROR', problem);
    const secret = randomBytes(32).toString('hex');
    const hook = await this.store.create({ projectId, url, secret });
    return ok({ url: hook.url, id: hook.id, secret: hook.secret });
  }

  /** Spec 4.4. */
  async delete(projectId: string, webhookId: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, webhookId)) ? ok(null) : fail('NOT_FOUND', 'Webhook not found');
  }
}
