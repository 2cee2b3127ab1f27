# tenure: one image for API nodes and workers (compose.yaml runs both from it).
# Build: docker build -t tenure .
# Run:   docker run -e DATABASE_URL=postgres://… -p 3000:3000 tenure
# See docs/operations.md.

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
# As `npm start` runs the server, for every tenure command the image runs (the server, the worker,
# an import; docs/memory.md): NODE_OPTIONS, one V8 worker thread (~40 MiB less at rest);
# MALLOC_MMAP_THRESHOLD_, glibc's malloc gives blocks of 32 KiB and more back when they are freed
# (~35 MiB less at rest: what V8's compilers freed after the start stayed with the process).
ENV NODE_ENV=production \
    NODE_OPTIONS=--v8-pool-size=1 \
    MALLOC_MMAP_THRESHOLD_=32768 \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds with esbuild, a dev dependency this stage leaves out.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
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
# `npx tenure serve` is what `npm start` runs, without its build step (dist/ is built above).
# SIGTERM (docker stop) drains requests and webhook attempts for TENURE_SHUTDOWN_TIMEOUT_MS.
CMD ["npx", "--no-install", "tenure", "serve"]
