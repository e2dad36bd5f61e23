# syntax=docker/dockerfile:1
#
# Strongroom's production image. Build:   docker build -t strongroom:0.1.0 .
# Run it on PostgreSQL with the secrets production requires (docs/deployment.md):
#   docker run --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
#     --env-file .env -v /etc/strongroom/transport.pem:/run/secrets/transport_private_key:ro \
#     -e TRANSPORT_PRIVATE_KEY_PATH=/run/secrets/transport_private_key -p 8080:8080 strongroom:0.1.0
#
# Base image: the node:24 slim tag (Debian, glibc: bcrypt's prebuilt linux-x64 and linux-arm64
# binaries load as shipped). The tag moves with every Node.js 24 patch release: in the bank's
# pipeline pin it by digest, e.g. --build-arg NODE_IMAGE=node:24-slim@sha256:<digest>
# (docker buildx imagetools inspect node:24-slim), and let the scanner's update bot move the pin.
#
# scripts/container-steps.sh runs the same steps without a container engine (CI on machines
# that have none); test/system/deploy-artefacts.test.ts checks this file against it.
ARG NODE_IMAGE=node:24-slim

# --- build: the TypeScript compiled to dist/ with the development dependencies -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency needs its install script (package.json "allowScripts"; docs/decisions.md).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The console and account pages (packages/console) bundle the client SDK's sources.
COPY packages/client/src ./packages/client/src
COPY packages/console ./packages/console
# tsc -p tsconfig.build.json: dist/src/server.js, dist/src/cli.js, the migrations and the FAQ
# starter set's JSON, all under dist/src; then vite: the console's pages and hashed assets in
# dist/console.
RUN npm run build

# --- deps: production dependencies only ------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# The service runs node directly; npm, npx and corepack are not needed at run time and are
# removed so that image scanners do not report what their bundled modules carry. /data is the
# DATA_DIR, owned by the service's user: used only by the embedded PGlite database outside
# production (mount a volume there); production (PostgreSQL, secrets from the environment)
# writes nothing to disk, so the root file system can be read-only.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
 && mkdir -p /data && chown 10001:10001 /data && chmod 0700 /data
WORKDIR /app
# Owned by root and not writable by the service's user.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/console ./dist/console
# "type": "module": dist/src/*.js are ES modules.
COPY package.json ./
# Production mode: DATABASE_URL, FIELD_ENCRYPTION_KEY, IP_HASH_KEY and the transport key are
# required at start (exit 78 naming each one missing). The API listens on all interfaces of the
# container on 8080; /health and /metrics are also on the management listener, 9090, which the
# orchestrator's probes and Prometheus use (/metrics is then not served on 8080).
ENV NODE_ENV=production
ENV HOST=0.0.0.0
ENV PORT=8080
ENV MANAGEMENT_HOST=0.0.0.0
ENV MANAGEMENT_PORT=9090
ENV DATA_DIR=/data
ENV LOG_FORMAT=json
EXPOSE 8080 9090
# A numeric UID and GID (no passwd entry needed), so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
# SIGTERM stops accepting connections, drains in-flight requests for up to SHUTDOWN_GRACE_MS
# (10 s by default) and exits 0. Give the container longer than that to stop:
# docker run --stop-timeout 15, compose stop_grace_period, Kubernetes terminationGracePeriodSeconds.
STOPSIGNAL SIGTERM
# No curl in the slim image: Node's own fetch. /health answers 200 when the database does, 503 when not.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MANAGEMENT_PORT || process.env.PORT || 8080) + '/health').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 (not npm, not a shell), so SIGTERM reaches the server's handler.
# The operator CLI: docker run --rm --entrypoint node <image> dist/src/cli.js migrate
ENTRYPOINT ["node", "dist/src/server.js"]
