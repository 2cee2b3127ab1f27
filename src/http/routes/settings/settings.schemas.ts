import Type from 'typebox';
import { DATE_FORMATS, TIME_FORMATS } from '../../../domain/settings/settings.catalogue.js';
import { MESSAGE_KINDS } from '../../../domain/lifecycle/member-messages.js';
import { Envelope, errorResponses, ProjectParams } from '../../schemas.js';

const MessageSetting = Type.Object({
  enabled: Type.Boolean(),
  text: Type.Union([Type.String(), Type.Record(Type.String(), Type.String()), Type.Null()], { description: "The owner's text (one for every language, or by language code); null for tenure's" }),
});

const Policy = Type.Union([Type.Object({ type: Type.Literal('url'), value: Type.String({ format: 'uri' }) }), Type.Null()]);

/** Documentation of the values; the domain's validators (settings.catalogue.ts) are the authority. */
export const Settings = Type.Object({
  default_language: Type.String({ description: 'ISO 639 language code, optionally with a region', examples: ['en', 'pt-BR'] }),
  timezone_preference: Type.String({ description: 'IANA time zone name', examples: ['UTC', 'Europe/Berlin'] }),
  date_format_preference: Type.Union(DATE_FORMATS.map((f) => Type.Literal(f))),
  time_format_preference: Type.Union(TIME_FORMATS.map((f) => Type.Literal(f))),
  collect_email_on_subscribe: Type.Boolean(),
  default_currency: Type.String({ description: 'ISO 4217 currency code', examples: ['USD'] }),
  support_enabled: Type.Boolean(),
  ai_enabled: Type.Boolean(),
  policies: Type.Object({
    terms: Policy,
    privacy: Policy,
    minimum_age: Type.Union([Type.Integer({ minimum: 0, maximum: 120 }), Type.Null()]),
  }),
  page_logo_url: Type.Union([Type.String({ format: 'uri', description: 'The public plan page\'s logo: an https URL' }), Type.Null()]),
  page_accent_color: Type.Union([Type.String({ pattern: '^#[0-9a-f]{6}$', description: 'The public pages\' accent colour, #rrggbb; the text on it is picked for WCAG AA contrast' }), Type.Null()]),
  reminder_offsets: Type.Array(Type.String({ pattern: '^[1-9][0-9]{0,3}[dh]$' }), { description: 'Reminders before a membership ends: durations before the end (7d, 1d, 12h), furthest first; [] for none' }),
  quiet_hours: Type.Union([Type.String({ pattern: '^[0-2][0-9]:[0-5][0-9]-[0-2][0-9]:[0-5][0-9]$', description: 'HH:MM-HH:MM in timezone_preference when reminders wait (may cross midnight)' }), Type.Null()]),
  messages: Type.Object(
    Object.fromEntries(MESSAGE_KINDS.map((k) => [k, Type.Optional(MessageSetting)])),
    { additionalProperties: false, description: "The bot's messages to members, each on or off and with the owner's text (docs/lifecycle.md); {} for tenure's words, all on" },
  ),
});

const KeyParams = Type.Object({ project_id: Type.String(), key: Type.String({ description: 'A setting name, e.g. default_currency', examples: ['timezone_preference'] }) });
const NoBody = Type.Null({ description: 'No body' });

export const listSettingsSchema = {
  summary: 'Get every setting of the project (defaults filled in)',
  params: ProjectParams,
  response: { 200: Envelope(Settings), ...errorResponses() },
};

export const getSettingSchema = {
  summary: 'Get one setting',
  params: KeyParams,
  response: { 200: Envelope(Type.Partial(Settings, { description: '{<key>: value}' })), ...errorResponses(404) },
};

export const putSettingSchema = {
  summary: 'Set one setting',
  params: KeyParams,
  body: Type.Object({ value: Type.Unknown({ description: "The new value, of the setting's type" }) }, { examples: [{ value: 'Europe/Berlin' }] }),
  response: { 204: NoBody, ...errorResponses(404, 422) },
};

export const patchSettingsSchema = {
  summary: 'Set several settings at once (all or nothing)',
  params: ProjectParams,
  body: Type.Object({}, { examples: [{ timezone_preference: 'Europe/Berlin' }], additionalProperties: true, description: '{<key>: value, …}; every key is validated before any is stored' }),
  response: { 204: NoBody, ...errorResponses(422) },
};
