import { pino, type Logger, type LoggerOptions } from 'pino';

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
];

export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
}

/**
 * Where logs go unless a caller passes its own destination: stdout, written in blocks. At `info`
 * Fastify logs two lines per request, and writing each line on its own (pino's default for stdout)
 * costs a write call and a thread-pool round trip per line: under load on a 2-core machine that
 * was 25–50 µs of CPU per `extend` request, 8–15% of the server's whole cost (`npm run bench`).
 * Lines leave in blocks of at least 4 KiB, or every 100 ms when traffic is light. pino flushes
 * synchronously when the process exits, so the fatal line logged before `process.exit(1)` is
 * never lost; only a SIGKILL can lose the last 100 ms.
 */
const STDOUT_BLOCK_BYTES = 4096;
const STDOUT_FLUSH_MS = 100;

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const stream =
    destination ?? pino.destination({ dest: 1, sync: false, minLength: STDOUT_BLOCK_BYTES, periodicFlush: STDOUT_FLUSH_MS });
  return pino(loggerOptions(level), stream);
}
