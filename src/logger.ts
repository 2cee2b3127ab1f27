import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import sonicBoom from 'sonic-boom';

/**
 * Structured JSON logs. Secrets never reach them: request serializers log no headers, and the
 * redaction list below removes any credential-shaped field that code might pass to a log call.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'password',
  '*.password',
  // Bot tokens (docs/access.md), as a request body or a store input would name them, and sealed.
  'bot_token',
  '*.bot_token',
  'botToken',
  '*.botToken',
  'bot_token_sealed',
  '*.bot_token_sealed',
  'botTokenSealed',
  '*.botTokenSealed',
  // Merchant accounts' secrets (docs/payments.md): the provider's secret key and webhook signing secret.
  'secret_key',
  '*.secret_key',
  'secretKey',
  '*.secretKey',
  'webhook_secret',
  '*.webhook_secret',
  'webhookSecret',
  '*.webhookSecret',
  '*.secretKeySealed',
  '*.webhookSecretSealed',
  // Login with Discord (docs/web.md): the application's client secret, as the connection's body names it.
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
];

/**
 * Query parameters whose names say they hold a credential, and API-key-shaped text anywhere in a
 * URL: callers do paste keys into URLs (`?api_key=`), and the request line is logged verbatim.
 * OAuth2's `code` and `state` (Discord's redirect back, docs/web.md) and the Telegram Login Widget's
 * `hash` are single use, but masked all the same.
 */
const CREDENTIAL_PARAM = /key|token|secret|auth|password|passwd|signature|session|cookie|^code$|^state$|^hash$/i;
const API_KEY_SHAPE = /tk_live_[0-9A-Za-z_-]*/g;
/** A member's pay or portal link (docs/front-desk.md), a dashboard sign-in link (docs/dashboard.md): its id is the secret that opens it. */
const MEMBER_LINK = /^(\/(?:pay|portal|dashboard\/sign-in)\/)[^/]+/;

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).replace(API_KEY_SHAPE, '[redacted]').replace(MEMBER_LINK, '$1[redacted]');
  if (q === -1) return path;
  const params = new URLSearchParams(url.slice(q + 1));
  const shown = [...params].map(([name, value]): [string, string] =>
    CREDENTIAL_PARAM.test(name) ? [name, '[redacted]'] : [name, value.replace(API_KEY_SHAPE, '[redacted]')],
  );
  return `${path}?${new URLSearchParams(shown).toString().replaceAll('%5Bredacted%5D', '[redacted]')}`;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/**
 * A failed Drizzle query's error carries the query's parameters (in `params` and in its message
 * and stack): a key hash, a webhook secret being stored. Errors are logged with the parameters
 * replaced; the SQL text and the driver's cause stay, since they are what explains a failure.
 */
const PARAMS_IN_MESSAGE = /\nparams: [\s\S]*$/;
const PARAMS_IN_STACK = /\nparams: [\s\S]*?(?=\n\s+at |$)/;

function withoutParams(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error) || depth > 5) return err;
  const e = err as Error & { params?: unknown };
  const cause = e.cause === undefined ? undefined : withoutParams(e.cause, depth + 1);
  if (!('params' in e) && !PARAMS_IN_MESSAGE.test(e.message) && cause === e.cause) return err;
  const copy = new Error(e.message.replace(PARAMS_IN_MESSAGE, '\nparams: [redacted]'), cause === undefined ? {} : { cause });
  const { params: _params, ...rest } = e as unknown as Record<string, unknown>;
  Object.assign(copy, rest);
  copy.name = e.name;
  copy.stack = e.stack?.replace(PARAMS_IN_STACK, '\nparams: [redacted]');
  return copy;
}

const errSerializer = (err: unknown) => ({
  ...pino.stdSerializers.err(withoutParams(err) as Error),
  type: (err as Error)?.constructor?.name ?? 'Error',
});

/** A request as logs show it: no headers at all, the URL's credentials masked. */
export const requestSummary = (req: LoggedRequest) => ({
  method: req.method,
  url: redactUrl(req.url),
  host: req.host,
  remoteAddress: req.ip,
  remotePort: req.socket?.remotePort,
});

/** Fastify's own request serializer, as requestSummary. */
const serializers = { err: errSerializer, req: requestSummary };

export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers };
}

/**
 * Where logs go unless a caller passes its own destination: stdout, written in blocks. At `info`
 * Fastify logs two lines per request, and writing each line on its own (pino's default for stdout)
 * costs a write call and a thread-pool round trip per line: under load on a 2-core machine that
 * was 25–50 µs of CPU per `extend` request, 8–15% of the server's whole cost (`npm run bench`).
 * Lines leave in blocks of at least 4 KiB, or every 100 ms when traffic is light. What is still
 * buffered is written synchronously when the process exits, so the fatal line logged before
 * `process.exit(1)` is kept; only a SIGKILL can lose the last 100 ms.
 *
 * Logging never decides whether the process runs or ends. A write that fails (the reader of a
 * stdout pipe went away: EPIPE; a full disk: ENOSPC) turns logging off instead of throwing out of
 * an event, and the exit's last write is tried once on a failing descriptor, and for at most
 * EXIT_FLUSH_MS on a full pipe. pino's own stdout destination (sonic-boom 4) retried a failing
 * last write every 100 ms forever, inside the 'exit' event: a server whose stdout reader had gone
 * released its port and lock on SIGTERM, then hung until SIGKILL. sonic-boom 5 throws instead.
 */
const STDOUT_BLOCK_BYTES = 4096;
const STDOUT_FLUSH_MS = 100;
const EXIT_FLUSH_MS = 1000;

let stdout: DestinationStream | undefined;

/** One per process: every logger writing to fd 1 shares its buffer, so their lines never interleave mid-line. */
function stdoutDestination(): DestinationStream {
  if (stdout) return stdout;
  let failed = false;
  let giveUpAt = Infinity;
  // sonic-boom is CommonJS: its class is both the module and the module's `SonicBoom` property.
  const boom = new sonicBoom.SonicBoom({
    fd: 1,
    sync: false,
    minLength: STDOUT_BLOCK_BYTES,
    // A full pipe (a slow reader) is waited for while the process runs, not for long at its exit.
    retryEAGAIN: () => Date.now() < giveUpAt,
  });
  // Only when a line came since the last flush: sonic-boom's flush of an empty buffer is still a
  // write call and a thread-pool round trip, ten a second for a server at rest (11% of its idle CPU).
  let unflushed = false;
  const periodic = setInterval(() => {
    if (!unflushed) return;
    unflushed = false;
    boom.flush();
  }, STDOUT_FLUSH_MS).unref();
  boom.on('error', () => {
    failed = true;
    clearInterval(periodic);
  });
  process.once('exit', () => {
    if (failed) return;
    giveUpAt = Date.now() + EXIT_FLUSH_MS;
    try {
      boom.flushSync();
    } catch {
      // The descriptor is gone, and the last lines with it; the exit goes on.
    }
  });
  stdout = {
    write(line: string) {
      if (failed) return;
      unflushed = true;
      boom.write(line);
    },
  };
  return stdout;
}

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(loggerOptions(level), destination ?? stdoutDestination());
}
