import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { LevelWithSilent } from 'pino';
import type { Redis } from 'ioredis';
import { AppError } from '../../../domain/errors.js';
import type { Metrics } from '../../../observability/metrics.js';
import { carriesMetricsToken } from '../../../observability/metrics-token.js';
import { asSoftDependency, checkDatabase, checkMigrations, checkRedis, probeRedisClient, type CheckResult } from '../../../observability/probes.js';
import type { Db } from '../../../database/db.js';
import { contextOf, sendSuccess } from '../../envelope.js';
import { healthzSchema, metricsSchema, readyzSchema } from './health.schemas.js';

export interface HealthDeps {
  db: Db;
  redisUrl: string | undefined;
  metrics: Metrics;
  /** When set, /metrics wants `Authorization: Bearer <token>`. */
  metricsToken: string | null;
}

const SEVERITY: LevelWithSilent[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Probes log warnings and worse, never more than the configured level lets through. */
const probeLogLevel = (configured: string): LevelWithSilent =>
  SEVERITY.indexOf(configured as LevelWithSilent) > SEVERITY.indexOf('warn') ? (configured as LevelWithSilent) : 'warn';

/**
 * `/healthz`, `/readyz` and `/metrics`. Probes run every few seconds from every load balancer,
 * so they skip the key and the rate limits (`probe`) and log only warnings.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthDeps> = async (app, deps) => {
  const redis: Redis | null = deps.redisUrl ? probeRedisClient(deps.redisUrl) : null;
  app.addHook('onClose', () => redis?.disconnect());
  // Migrations never go backwards: once all are seen applied, later probes need not re-read them.
  let migrationsApplied = false;
  const probe = { config: { probe: true }, logLevel: probeLogLevel(app.log.level) };

  app.get('/healthz', { ...probe, schema: healthzSchema }, async (_request, reply) =>
    sendSuccess(reply, 200, { message: 'tenure is up', data: { status: 'up' as const, uptime_seconds: Math.round(process.uptime()) } }),
  );

  app.get('/readyz', { ...probe, schema: readyzSchema }, async (request, reply) => {
    const database = await checkDatabase(deps.db);
    const migrations: CheckResult = migrationsApplied
      ? { name: 'migrations', status: 'ok', detail: 'all applied' }
      : database.status === 'ok'
        ? await checkMigrations(deps.db)
        : { name: 'migrations', status: 'skipped', detail: 'not checked: the database is unreachable' };
    migrationsApplied = migrations.status === 'ok';
    const checks = [database, migrations, asSoftDependency(await checkRedis(redis))];
    const failing = checks.filter((c) => c.status === 'failed');
    const degraded = checks.filter((c) => c.status === 'degraded');
    const describe = (list: CheckResult[]) => list.map((c) => `${c.name} ${c.detail}`).join('; ');
    if (failing.length === 0 && degraded.length > 0) {
      request.log.warn({ checks }, 'ready, degraded');
      return sendSuccess(reply, 200, { message: `Ready, degraded: ${describe(degraded)}`, data: { status: 'degraded' as const, checks } });
    }
    if (failing.length === 0) return sendSuccess(reply, 200, { message: 'tenure is ready', data: { status: 'ready' as const, checks } });
    const message = `Not ready: ${describe(failing)}`;
    request.log.warn({ checks }, 'readiness check failed');
    return reply.code(503).send({
      ok: false as const,
      ...contextOf(request),
      code: 503,
      error: { error_code: 'SERVICE_UNAVAILABLE' as const, message, checks },
    });
  });

  app.get('/metrics', { ...probe, schema: metricsSchema }, async (request, reply) => {
    if (deps.metricsToken !== null) {
      if (!carriesMetricsToken(request.headers.authorization, deps.metricsToken)) {
        throw new AppError('UNAUTHORIZED', 'Metrics need the bearer token set in TENURE_METRICS_TOKEN');
      }
    }
    const text = await deps.metrics.scrape();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });
};
