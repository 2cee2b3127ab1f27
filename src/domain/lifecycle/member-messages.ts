import { catalogues, fill, formatInstant, placeholdersOf, strayBraces, translate, type InstantFormat } from './message-catalogue.js';

/**
 * What the project's bot says to a member at each moment (docs/lifecycle.md, "The messages"): the
 * words from the catalogue (locales/) in the project's language, or the owner's own text (setting
 * `messages`), the dates as the project writes them, and the link buttons. Pure: the job
 * (src/domain/front-desk/confirmations.ts) decides whether a message still goes and makes its links.
 */

/** The messages an owner can change or turn off, one per moment. */
export const MESSAGE_KINDS = ['welcome', 'confirmation', 'invite', 'reminder', 'expired', 'payment_failed', 'cancelled'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** The placeholders each message may use (an owner's text naming any other is refused). */
const COMMON = ['name', 'plan', 'end_date', 'status_command'] as const;
export const MESSAGE_PLACEHOLDERS: Readonly<Record<MessageKind, readonly string[]>> = {
  welcome: COMMON,
  confirmation: COMMON,
  invite: ['name', 'chat', 'link', 'expires_at', 'status_command'],
  reminder: [...COMMON, 'link'],
  expired: [...COMMON, 'link'],
  payment_failed: [...COMMON, 'link'],
  cancelled: COMMON,
};

/** One message's setting: on or off, and the owner's text (one for every language, or per language), null for the catalogue's. */
export interface MessageSetting {
  enabled: boolean;
  text: string | Readonly<Record<string, string>> | null;
}
export type MessagesSetting = Readonly<Partial<Record<MessageKind, MessageSetting>>>;

/** Longest owner text: Discord takes 2,000 characters a message; room is left for links and the closing sentence. */
export const MAX_MESSAGE_TEXT = 1_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const LANGUAGE = /^[a-z]{2,3}(-[A-Z]{2})?$/;

function checkText(where: string, kind: MessageKind, text: unknown): string | null {
  if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_MESSAGE_TEXT) return `${where} must be a text of 1 to ${MAX_MESSAGE_TEXT} characters`;
  const allowed = MESSAGE_PLACEHOLDERS[kind];
  const unknown = placeholdersOf(text).filter((p) => !allowed.includes(p));
  if (unknown.length > 0) return `${where} uses unknown placeholder ${unknown.map((p) => `{${p}}`).join(', ')}; ${kind} allows ${allowed.map((p) => `{${p}}`).join(', ')}`;
  if (strayBraces(text)) return `${where} has a { or } that is not a placeholder; ${kind} allows ${allowed.map((p) => `{${p}}`).join(', ')}`;
  return null;
}

/**
 * The `messages` setting to store, or the sentence naming what is wrong: an object of messages
 * (any of MESSAGE_KINDS), each `{enabled?, text?}`; `text` null, a text, or an object of texts by
 * language code (`{"en": "…", "de": "…"}`).
 */
export function parseMessages(v: unknown): { ok: true; value: MessagesSetting } | { ok: false; message: string } {
  const bad = (message: string) => ({ ok: false as const, message });
  if (!isObject(v)) return bad(`messages must be an object of messages (${MESSAGE_KINDS.join(', ')}), each {"enabled": true|false, "text": null|"…"|{"en": "…"}}`);
  const out: Partial<Record<MessageKind, MessageSetting>> = {};
  for (const [kind, m] of Object.entries(v)) {
    if (!(MESSAGE_KINDS as readonly string[]).includes(kind)) return bad(`messages has an unknown message: ${kind}; the messages are ${MESSAGE_KINDS.join(', ')}`);
    const k = kind as MessageKind;
    if (!isObject(m)) return bad(`messages.${k} must be an object {"enabled": true|false, "text": null|"…"|{"en": "…"}}`);
    const extra = Object.keys(m).filter((f) => f !== 'enabled' && f !== 'text');
    if (extra.length > 0) return bad(`messages.${k} has unknown fields: ${extra.join(', ')}`);
    if (m.enabled !== undefined && typeof m.enabled !== 'boolean') return bad(`messages.${k}.enabled must be true or false`);
    const text = m.text ?? null;
    if (isObject(text)) {
      if (Object.keys(text).length === 0) return bad(`messages.${k}.text must name at least one language, or be null`);
      for (const [language, t] of Object.entries(text)) {
        if (!LANGUAGE.test(language)) return bad(`messages.${k}.text has ${language}, which is not a language code (en, pt-BR)`);
        const wrong = checkText(`messages.${k}.text.${language}`, k, t);
        if (wrong) return bad(wrong);
      }
    } else if (text !== null) {
      const wrong = checkText(`messages.${k}.text`, k, text);
      if (wrong) return bad(wrong);
    }
    out[k] = { enabled: (m.enabled as boolean | undefined) ?? true, text: text as MessageSetting['text'] };
  }
  return { ok: true, value: out };
}

/** The owner's text for `language` (its own, its base language's, or the one text for all), or null. */
export function ownerText(setting: MessageSetting | undefined, language: string): string | null {
  const text = setting?.text ?? null;
  if (text === null || typeof text === 'string') return text;
  return text[language] ?? text[language.split('-')[0]!] ?? null;
}

/** A link button under a message (Discord: a link button; Telegram: an inline keyboard URL button). */
export interface LinkButton {
  label: string;
  url: string;
}

export interface ComposedMessage {
  text: string;
  buttons: LinkButton[];
}

/** How the project speaks: its language, how it writes instants, its `messages` setting. */
export interface Voice extends InstantFormat {
  messages: MessagesSetting;
}

/** The facts a message names. */
export interface MessageFacts {
  kind: MessageKind;
  platform: 'discord' | 'telegram';
  /** The member's first name or username, if known. */
  name: string | null;
  planName: string | null;
  /** The end the message is about (for payment_failed: until when access is kept). */
  endDate: Date | null;
  recurring: boolean;
  /** The membership is in a trial (a reminder then says the trial ends). */
  trial: boolean;
  /** Where the button leads (a pay link, the billing portal), null when none could be made. */
  link: string | null;
  /** A confirmation's Telegram invite links. */
  invites: readonly string[];
  /** An invite's own facts. */
  invite: { link: string; chatName: string; expiresAt: Date; joinRequest: boolean } | null;
}

const STATUS_COMMAND = { discord: '/memberships', telegram: '/status' } as const;

/** The catalogue key of a message's main sentence. */
function keyOf(f: MessageFacts): string {
  const noPlan = f.planName === null;
  switch (f.kind) {
    case 'reminder':
      if (noPlan) return 'reminder.ends.no_plan';
      return f.trial ? 'reminder.trial' : f.recurring ? 'reminder.renews' : 'reminder.ends';
    case 'welcome':
    case 'expired':
      return noPlan ? `${f.kind}.no_plan` : f.kind;
    case 'invite':
      return f.invite?.joinRequest ? 'invite.join_request' : 'invite.single_use';
    default:
      return f.kind;
  }
}

/** The message: its main sentence (the owner's or the catalogue's), then what to do next, and its button. */
export function composeMessage(f: MessageFacts, voice: Voice): ComposedMessage {
  const language = voice.language;
  const when = (t: Date | null) => (t === null ? '' : formatInstant(t, voice));
  const values: Record<string, string> = {
    name: f.name ?? '',
    plan: f.planName ?? '',
    end_date: when(f.endDate),
    status_command: STATUS_COMMAND[f.platform],
    link: f.invite?.link ?? f.link ?? '',
    chat: f.invite?.chatName ?? '',
    expires_at: when(f.invite?.expiresAt ?? null),
  };
  const own = ownerText(voice.messages[f.kind], language);
  const head = own === null ? translate(language, keyOf(f), values) : fill(own, values);
  const check = translate(language, f.platform === 'telegram' ? 'check.telegram' : 'check', values);
  if (f.kind === 'invite') return { text: head, buttons: [] };
  if (f.kind === 'confirmation') {
    const links = f.invites.length === 0 ? '' : ` ${translate(language, f.invites.length === 1 ? 'confirmation.join_one' : 'confirmation.join_many', { links: f.invites.join(' ') })}`;
    return { text: `${head}${links} ${check}`, buttons: [] };
  }
  const button = buttonOf(f, language);
  return { text: button ? head : `${head} ${check}`, buttons: button ? [button] : [] };
}

/** The one button a message carries: Renew (a pay link), or Manage billing (the member's billing). */
function buttonOf(f: MessageFacts, language: string): LinkButton | null {
  if (f.link === null) return null;
  const billing = f.kind === 'payment_failed' || (f.kind === 'reminder' && f.recurring);
  if (f.kind !== 'reminder' && f.kind !== 'expired' && f.kind !== 'payment_failed') return null;
  return { label: translate(language, billing ? 'button.billing' : 'button.renew'), url: f.link };
}

/** Every catalogue language, for the docs and the settings' checks. */
export const catalogueLanguages = (): string[] => [...catalogues().keys()];
