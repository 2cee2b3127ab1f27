import Type from 'typebox';
import { Envelope, errorResponses } from '../../schemas.js';

/** Probes and metrics (docs/operations.md): public, never rate limited, answered in the envelope. */

const Check = Type.Object({
  name: Type.Union([Type.Literal('database'), Type.Literal('migrations'), Type.Literal('redis')]),
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('degraded'), Type.Literal('skipped')]),
  detail: Type.String(),
});

const head = {
  request_id: Type.String({ format: 'uuid' }),
  method: Type.String(),
  path: Type.String(),
  code: Type.Integer(),
};

export const healthzSchema = {
  summary: 'Liveness: the process is up and answering',
  response: {
    200: Envelope(Type.Object({ status: Type.Literal('up'), uptime_seconds: Type.Number() })),
  },
};

export const readyzSchema = {
  summary: 'Readiness: database reachable and migrations applied (503 otherwise); Redis unreachable only degrades (200, status degraded)',
  response: {
    200: Envelope(Type.Object({ status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]), checks: Type.Array(Check) })),
    // The error envelope, with every check's result so the failing one can be read at once.
    503: Type.Object({
      ok: Type.Literal(false),
      ...head,
      error: Type.Object({ error_code: Type.Literal('SERVICE_UNAVAILABLE'), message: Type.String(), checks: Type.Array(Check) }),
    }),
  },
};

const { 401: unauthorized, 500: internal } = errorResponses();

export const metricsSchema = {
  summary: 'Prometheus metrics (text exposition format); needs TENURE_METRICS_TOKEN as a bearer token when that is set',
  response: {
    200: {
      description: 'Prometheus text exposition format 0.0.4',
      content: { 'text/plain': { schema: Type.String() } },
    },
    401: unauthorized,
    500: internal,
  },
};
