# The durable-agent image: the worker (default command) and the CLI, from the compiled package.
# Used by docker-compose.yml (worker, and the demo profile's scripted model and session).
#   docker build -t durable-agent .     docker run --rm -e TEMPORAL_ADDRESS=… durable-agent worker

# Build: all dependencies, then `npm run build` (src/ → dist/).
FROM node:20.19.5-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build.mjs
COPY src src
RUN npm run build

# Run: production dependencies only, the compiled package, and what the tools need on the host
# (ripgrep for Grep, bubblewrap and socat for the Bash sandbox and its network proxy, git for sessions that use it).
FROM node:20.19.5-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ripgrep bubblewrap socat git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist dist
COPY bin bin
COPY README.md ./
# The demo profile's scenario and workspace (a named volume is seeded from /workspace).
COPY examples examples
RUN mkdir -p /workspace && cp -r examples/workspace/. /workspace/ && chown -R node:node /workspace
USER node
ENTRYPOINT ["node", "bin/durable-agent.js"]
CMD ["worker"]
