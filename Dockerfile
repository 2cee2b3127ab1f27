# tenure: one image for API nodes and workers (compose.yaml runs both from it).
# Build: docker build -t tenure .
# Run:   docker run -e DATABASE_URL=postgres://… -p 3000:3000 tenure
# See docs/deployment.md.

# ── build: all dependencies, compile TypeScript to dist/ ─────────────────────────────────────
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here: `prepare` would build before the sources are copied.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
RUN npm run build

# ── runtime: production dependencies, dist/ and the migrations, as a non-root user ───────────
FROM node:20-slim AS runtime
# NODE_OPTIONS: one V8 worker thread, as `npm start` runs the server, for every tenure command the
# image runs (the server, the worker, an import): ~40 MiB less at rest (docs/memory.md).
ENV NODE_ENV=production \
    NODE_OPTIONS=--v8-pool-size=1 \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds with esbuild, a dev dependency this stage leaves out.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# `tenure` on the PATH runs the CLI as the process itself: `npx tenure` would keep npm (~75 MiB)
# running beside it for as long as the server runs.
RUN chmod +x dist/cli/main.js && ln -s /app/dist/cli/main.js /usr/local/bin/tenure
# Every command goes through it: glibc's malloc setting for the storage (docs/memory.md).
COPY scripts/with-memory-settings.sh ./scripts/
COPY drizzle ./drizzle
# The bot's messages to members, one file per language (docs/lifecycle.md), read at start.
COPY locales ./locales
# Embedded storage (no DATABASE_URL) keeps its data in /data; mount a volume there to keep it.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# Readiness as the load balancer sees it: database reachable, migrations applied, Redis if set.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `tenure serve` is what `npm start` runs, without its build step (dist/ is built above). The
# entrypoint execs the command, so the server is the container's first process and gets SIGTERM
# (docker stop) itself: it drains requests and webhook attempts for TENURE_SHUTDOWN_TIMEOUT_MS.
ENTRYPOINT ["sh", "/app/scripts/with-memory-settings.sh"]
CMD ["tenure", "serve"]
