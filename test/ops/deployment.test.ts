import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { tenure } from './ops-support.js';

/**
 * The Dockerfile, compose.yaml and the nginx config cannot run here (no Docker engine), so they
 * are checked for what would break them: compose.yaml parses, every tenure service runs a real
 * CLI command with an environment src/config.ts accepts, the commands are the README's, the
 * load balancer points at the API services, and the image builds the way the README builds.
 */

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const read = (p: string) => readFileSync(root(p), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  stop_grace_period?: string;
}

/** Compose's `${VAR:-default}` with no VAR set: the default. */
const interpolate = (text: string) => text.replace(/\$\{(\w+):-([^}]*)\}/g, (_m, _name: string, fallback: string) => fallback);
const compose = parse(interpolate(read('compose.yaml')), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const tenureServices = Object.entries(services).filter(([, s]) => s.command?.[0] === 'tenure');

describe('compose.yaml', () => {
  it('runs two API nodes, one worker, PostgreSQL, Redis and a load balancer', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'lb', 'migrate', 'postgres', 'redis', 'worker']);
    for (const name of ['api-1', 'api-2']) {
      expect(services[name]!.command).toEqual(['tenure', 'serve']);
      expect(services[name]!.environment).toMatchObject({ TENURE_WORKER: 'false', TRUST_PROXY: 'true' });
      expect(services[name]!.healthcheck!.test!.join(' ')).toContain('/readyz');
    }
    expect(services.worker!.command).toEqual(['tenure', 'worker']);
    expect(services.migrate!.command).toEqual(['tenure', 'migrate']);
    expect(services['api-1']!.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
  });

  it('gives every tenure service an environment the config accepts: PostgreSQL and Redis', () => {
    expect(tenureServices).toHaveLength(4);
    for (const [name, service] of tenureServices) {
      const config = loadConfig(service.environment);
      expect(config.storage.kind, name).toBe('postgres');
      expect(config.redisUrl, name).toBe('redis://redis:6379');
      expect(config.http).toMatchObject({ host: '0.0.0.0', port: 3000 });
      // Docker's stop waits longer than tenure's drain.
      expect(parseInt(service.stop_grace_period ?? '10', 10) * 1000, name).toBeGreaterThan(config.ops.shutdownTimeoutMs);
    }
  });

  it("uses the README's commands, each of which the CLI knows", async () => {
    const readme = read('README.md');
    for (const [, service] of tenureServices) {
      const command = service.command!.slice(1);
      expect(readme).toContain(`npx tenure ${command.join(' ')}`);
      const help = await tenure({ PATH: process.env.PATH ?? '' }, ...command, '--help');
      expect(help.code, help.stderr).toBe(0);
    }
  });

  it('points the load balancer at the API nodes, setting the forwarded address itself', () => {
    expect(services.lb!.volumes).toContain('./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro');
    const nginx = read('deploy/nginx.conf');
    const upstreams = [...nginx.matchAll(/server (\S+):(\d+)/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(new Set(upstreams)).toEqual(new Set(['api-1:3000', 'api-2:3000']));
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
    expect(nginx).toMatch(/location \/v2\/live-updates\/ \{[^}]*Upgrade/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('builds in two node:20-slim stages with npm ci and runs as a non-root user', () => {
    expect(dockerfile.match(/^FROM node:20-slim AS \w+$/gm)).toEqual(['FROM node:20-slim AS build', 'FROM node:20-slim AS runtime']);
    expect(dockerfile).toMatch(/^RUN npm ci --ignore-scripts$/m);
    expect(dockerfile).toMatch(/^RUN npm run build$/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev --ignore-scripts/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toContain('CMD ["tenure", "serve"]');
  });

  it('runs the CLI itself as the command (no npm beside it), through the storage\'s malloc setting', () => {
    // `tenure` on the PATH is dist/cli/main.js, whose shebang runs node: one process per container.
    expect(dockerfile).toMatch(/^RUN chmod \+x dist\/cli\/main\.js && ln -s \/app\/dist\/cli\/main\.js \/usr\/local\/bin\/tenure$/m);
    expect(read('dist/cli/main.js').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(JSON.parse(read('package.json')).bin).toEqual({ tenure: 'dist/cli/main.js' });
    expect(dockerfile).toContain('COPY scripts/with-memory-settings.sh ./scripts/');
    expect(dockerfile).toContain('ENTRYPOINT ["sh", "/app/scripts/with-memory-settings.sh"]');
    expect(dockerfile).not.toMatch(/^CMD \["npx"/m);
  });

  it('copies only paths that exist, and what dist/ needs at run time (the migrations)', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(sources).toContain('drizzle');
    for (const source of sources) expect(existsSync(root(source)), source).toBe(true);
    const ignored = read('.dockerignore').split('\n').filter((l) => l && !l.startsWith('#'));
    // As Docker reads it: the last pattern naming the path or a folder above it decides, `!` keeps it.
    const excluded = (source: string) =>
      ignored.reduce((out, line) => {
        const pattern = line.replace(/^!/, '');
        return source === pattern || source.startsWith(`${pattern}/`) ? !line.startsWith('!') : out;
      }, false);
    for (const source of sources) expect(excluded(source), source).toBe(false);
    expect(excluded('scripts/build-if-stale.mjs')).toBe(true);
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'data', '.git', '.env']));
  });
});
