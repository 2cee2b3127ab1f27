import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { levels, type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import { requestSummary } from '../logger.js';

/** The field every line of a request carries (Fastify's child logger per request, and the line below). */
export const REQUEST_ID_LABEL = 'request_id';

/**
 * One line per request at `info`, `request completed`, with the request (method, URL with its
 * credentials masked, host, client address), the status and the response time: what Fastify's two
 * lines (`incoming request`, then `request completed`) said between them; `incoming request` is
 * still logged at `debug`, when the request arrives. Fastify's other lines (errors, a stream closed
 * early, a route not found) are unchanged.
 *
 * The line is written without the redaction pass every other log call goes through
 * (src/logger.ts REDACT_PATHS): its object is built here from fields that hold no credential
 * (requestSummary logs no header and masks the URL), and that pass, which clones the object and
 * walks each wildcard path, cost ten times the line itself: ~20 µs of the ~25 µs two redacted
 * lines took, on every request (bench/README.md, "Per request").
 */
export class RequestLogController extends LogController {
  private readonly lines: Logger;

  constructor(logger: FastifyBaseLogger) {
    super({ requestIdLogLabel: REQUEST_ID_LABEL });
    // A child with no paths to redact (pino's child options replace the parent's list).
    this.lines = (logger as Logger).child({}, { redact: { paths: [] } });
  }

  /** At `debug` only: at `info` the completion line says it all. */
  override incomingRequest(request: FastifyRequest): void {
    if (this.lines.isLevelEnabled('debug') && routeAllows(request, 'debug')) this.lines.debug({ [REQUEST_ID_LABEL]: request.id, req: requestSummary(request) }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      super.requestCompleted(error, request, reply);
      return;
    }
    // A route's own `logLevel` (the probes log warnings only) holds for this line too.
    if (!this.lines.isLevelEnabled('info') || !routeAllows(request, 'info')) return;
    this.lines.info(
      {
        [REQUEST_ID_LABEL]: request.id,
        req: requestSummary(request),
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  }
}

/** The request's route lets a line at `level` through (its `logLevel`, else the server's). */
function routeAllows(request: FastifyRequest, level: 'debug' | 'info'): boolean {
  const routeLevel = request.log.level;
  return routeLevel === 'silent' ? false : (levels.values[routeLevel] ?? 0) <= levels.values[level]!;
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * `request.log`, the logger Fastify gives each request, made only when the request logs a line of
 * its own (an error, an idempotent replay...). Fastify's default makes a pino child for every
 * request, binding its id; most requests never use it, and making it cost ~5 µs of CPU a request
 * (~1.7% of the full server's in a perf profile of the per-request bench), the request's one line
 * being written by RequestLogController above. The child made on first use is the one Fastify
 * would have made (same bindings, same options: a route's `logLevel`), and `level` reads as that
 * child's would.
 */
export class RequestLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get made(): FastifyBaseLogger {
    return (this.#made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.made.level = level;
  }

  readonly fatal = this.method('fatal');
  readonly error = this.method('error');
  readonly warn = this.method('warn');
  readonly info = this.method('info');
  readonly debug = this.method('debug');
  readonly trace = this.method('trace');
  readonly silent: FastifyBaseLogger['silent'] = () => undefined;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made.child(bindings, options);
  }

  private method(name: LogMethod): FastifyBaseLogger[LogMethod] {
    return ((...args: Parameters<FastifyBaseLogger[LogMethod]>) => this.made[name](...args)) as FastifyBaseLogger[LogMethod];
  }
}

/** Fastify's `childLoggerFactory`: a RequestLogger per request. */
export const requestLoggerFactory = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
  new RequestLogger(logger, bindings, options);
