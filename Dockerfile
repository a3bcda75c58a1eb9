# syntax=docker/dockerfile:1
# The node image of docker-compose.yml: one image runs a ponger or the pinger, chosen by the
# service's command (node examples/ping-pong/bin/<role>.cjs) and GRANARY_* variables.

# Build stage: install everything, generate the example's code and compile it, then drop the
# dev dependencies so the runtime stage copies only what runs.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
RUN npm run build -w @granary/example-ping-pong
RUN npm prune --omit=dev --no-audit --no-fund

# Runtime stage: the compiled packages and the example, production dependencies only.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
COPY --from=build /app/examples ./examples
USER node
EXPOSE 4000
CMD ["node", "examples/ping-pong/bin/ponger.cjs"]
