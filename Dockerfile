# syntax=docker/dockerfile:1
# Build stage: dev dependencies, compile TypeScript and bundle the CLI (npm run build, through
# npm ci's prepare), then drop dev dependencies.
# Fully qualified base image: podman and other engines without Docker Hub short-name aliases resolve it too.
FROM docker.io/library/node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY routes ./routes
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

# Run stage: production dependencies, the bundled CLI, the precompiled validators and the built OpenAPI documents only (dist/bundle; it loads better-sqlite3,
# pino and the docs' packages from node_modules, and migrations/, fixtures/, public/ from /app).
FROM docker.io/library/node:20-bookworm-slim AS run
# Other containers reach the control API as http://agency-sandbox:8080 (docker run --name, a CI
# service): a single-label name public DNS never answers. Other names: set SANDBOX_ALLOWED_HOSTS.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    SANDBOX_ALLOWED_HOSTS=agency-sandbox \
    PORT=8080 \
    SANDBOX_DB=/data/sandbox.db \
    LOG_LEVEL=info \
    LOG_PRETTY=false
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/bundle ./dist/bundle
COPY --from=build /app/dist/validators ./dist/validators
COPY --from=build /app/dist/openapi ./dist/openapi
COPY migrations ./migrations
COPY fixtures ./fixtures
COPY public ./public
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# No --start-interval: podman 4 and older Docker engines refuse the build with it.
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/_sandbox/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/bundle/cli.js"]
CMD ["serve"]
