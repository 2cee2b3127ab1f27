import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { fakeSnowflake, type DiscordWorld } from './fake-discord-model.js';
import { fail, invalidField, type Answer } from './fake-discord-routes.js';

/**
 * The fake Discord's side of interactions and application commands, from Discord's documentation
 * (https://discord.com/developers/docs: Interactions, "Receiving and Responding" and "Application
 * Commands"; Resources, "Application"):
 * - Every bot belongs to an application whose id is the bot's user id (as for every application
 *   made since 2020) and whose key pair is the test's own (Ed25519). `GET /applications/@me` answers
 *   the application object with `verify_key`, the public key in hex.
 * - An interaction is POSTed to the endpoint signed as Discord signs it: `X-Signature-Ed25519`, the
 *   hex Ed25519 signature of `X-Signature-Timestamp` (Unix seconds) followed by the body's bytes.
 *   Each carries an `id` and a `token`, valid 15 minutes for its follow-up webhooks.
 * - `PUT /applications/{application.id}/guilds/{guild.id}/commands` (bulk overwrite) replaces the
 *   guild's commands of the application with the body and answers 200 with them (ids given, kept
 *   for a name already there). Only the application's own bot may (403 50001 Missing Access
 *   otherwise), and only in a guild it was added to with `applications.commands` (403 50001).
 *   Names are 1-32 lower-case letters, digits, `-` or `_`, descriptions 1-100 characters, at most
 *   100 commands, names distinct: else 400 50035 Invalid Form Body.
 * - `PATCH /webhooks/{application.id}/{interaction.token}/messages/@original` edits the original
 *   answer; no Authorization (the token is in the path). An unknown token answers 404 10015 Unknown
 *   Webhook, one older than 15 minutes 401 50027 Invalid Webhook Token; 200 with the message.
 */

export const INTERACTION_TOKEN_TTL_MS = 15 * 60_000;

export interface FakeCommand {
  id: string;
  application_id: string;
  guild_id: string;
  version: string;
  name: string;
  description: string;
  type: number;
  default_member_permissions: string | null;
  [field: string]: unknown;
}

/** What an interaction's follow-up webhook received. */
export interface FakeOriginalEdit {
  applicationId: string;
  token: string;
  body: Record<string, unknown>;
  at: number;
}

export interface SignedInteraction {
  payload: string;
  headers: Record<string, string>;
  /** The interaction as sent (its id and token included). */
  interaction: Record<string, unknown>;
}

const COMMAND_NAME = /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u;

/** A DM as sent: its text and its link buttons (one list per action row). */
export interface FakeDmMessage {
  content: string;
  buttons: { label: string; url: string }[][];
}

export class InteractionsDesk {
  private readonly keys = new Map<string, { publicHex: string; privateKey: KeyObject }>();
  /** `${applicationId}:${guildId}` → the guild's commands of that application. */
  readonly commands = new Map<string, FakeCommand[]>();
  private readonly tokens = new Map<string, { applicationId: string; issuedAt: number }>();
  readonly edits: FakeOriginalEdit[] = [];
  /** DM channels: channel id → `${botId}:${userId}`; the messages sent in each, by `${botId}:${userId}`. */
  readonly dmChannels = new Map<string, string>();
  readonly dms = new Map<string, string[]>();
  /** The same messages with their components (action rows of link buttons), by `${botId}:${userId}`. */
  readonly dmMessages = new Map<string, FakeDmMessage[]>();
  /** Users who closed their DMs to a bot (`${botId}:${userId}`): Create Message answers 403 50007. */
  readonly closedDms = new Set<string>();
  private nextChannel = 9_000_000_000_000_000n;

  constructor(private readonly world: DiscordWorld) {}

  /** Create DM: the bot's DM channel with the user (the same one each time). */
  openDm(botId: string, userId: string) {
    const key = `${botId}:${userId}`;
    let id = [...this.dmChannels].find(([, k]) => k === key)?.[0];
    if (!id) {
      id = String(this.nextChannel++);
      this.dmChannels.set(id, key);
    }
    return { id, type: 1, last_message_id: null, flags: 0, recipients: [this.world.userJson(userId)] };
  }

  private keyOf(applicationId: string) {
    let key = this.keys.get(applicationId);
    if (!key) {
      const pair = generateKeyPairSync('ed25519');
      const der = pair.publicKey.export({ format: 'der', type: 'spki' });
      key = { publicHex: der.subarray(der.length - 32).toString('hex'), privateKey: pair.privateKey };
      this.keys.set(applicationId, key);
    }
    return key;
  }

  verifyKey(applicationId: string): string {
    return this.keyOf(applicationId).publicHex;
  }

  applicationJson(botId: string) {
    const bot = this.world.bot(botId);
    return {
      id: bot.id,
      name: bot.username,
      icon: null,
      description: '',
      bot_public: false,
      bot_require_code_grant: false,
      verify_key: this.verifyKey(bot.id),
      flags: 0,
      bot: this.world.userJson(bot.id),
    };
  }

  /**
   * An interaction for `applicationId`, signed with its private key as Discord signs it. `fields`
   * are the interaction's (type, data, guild_id, member…); an id and a token are added unless given.
   * `timestampSeconds` defaults to now.
   */
  sign(applicationId: string, fields: Record<string, unknown>, timestampSeconds = Math.floor(Date.now() / 1000)): SignedInteraction {
    const interaction = { id: fakeSnowflake(), application_id: applicationId, token: `aW50ZXJhY3Rpb246${randomBytes(24).toString('base64url')}`, version: 1, ...fields };
    if (typeof interaction.token === 'string') this.tokens.set(interaction.token, { applicationId, issuedAt: Date.now() });
    const payload = JSON.stringify(interaction);
    const timestamp = String(timestampSeconds);
    const signature = sign(null, Buffer.from(timestamp + payload, 'utf8'), this.keyOf(applicationId).privateKey).toString('hex');
    return {
      payload,
      interaction,
      headers: { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp },
    };
  }

  /** Bulk overwrite of a guild's commands, by `botId`'s token. */
  overwrite(botId: string, applicationId: string, guildId: string, body: unknown): Answer {
    if (applicationId !== botId) return fail(403, 50001, 'Missing Access');
    const guild = this.world.guilds.get(guildId);
    if (!guild) return fail(404, 10004, 'Unknown Guild');
    if (!guild.members.has(botId)) return fail(403, 50001, 'Missing Access');
    if (!Array.isArray(body)) return invalidField('_errors', 'LIST_TYPE_CONVERT', 'Must be a list.');
    if (body.length > 100) return invalidField('_errors', 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
    const key = `${applicationId}:${guildId}`;
    const before = new Map((this.commands.get(key) ?? []).map((c) => [c.name, c]));
    const names = new Set<string>();
    const next: FakeCommand[] = [];
    for (const [i, raw] of body.entries()) {
      const c = (raw ?? {}) as Record<string, unknown>;
      if (typeof c.name !== 'string' || !COMMAND_NAME.test(c.name)) return invalidField(`${i}.name`, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
      const type = c.type ?? 1;
      if (type === 1 && (typeof c.description !== 'string' || c.description.length < 1 || c.description.length > 100)) {
        return invalidField(`${i}.description`, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
      }
      if (names.has(c.name)) return invalidField(`${i}.name`, 'APPLICATION_COMMANDS_DUPLICATE_NAME', 'Application command names must be unique');
      names.add(c.name);
      next.push({
        ...c,
        id: before.get(c.name)?.id ?? fakeSnowflake(),
        application_id: applicationId,
        guild_id: guildId,
        version: fakeSnowflake(),
        name: c.name,
        description: typeof c.description === 'string' ? c.description : '',
        type: type as number,
        default_member_permissions: (c.default_member_permissions as string | null | undefined) ?? null,
      });
    }
    this.commands.set(key, next);
    return { status: 200, body: next };
  }

  /** The follow-up webhook's edit of the original answer. */
  editOriginal(applicationId: string, token: string, body: unknown, at: number): Answer {
    const issued = this.tokens.get(token);
    if (!issued || issued.applicationId !== applicationId) return fail(404, 10015, 'Unknown Webhook');
    if (at - issued.issuedAt > INTERACTION_TOKEN_TTL_MS) return fail(401, 50027, 'Invalid Webhook Token');
    const message = (body ?? {}) as Record<string, unknown>;
    this.edits.push({ applicationId, token, body: message, at });
    return { status: 200, body: { id: fakeSnowflake(), type: 20, webhook_id: applicationId, application_id: applicationId, ...message } };
  }
}
