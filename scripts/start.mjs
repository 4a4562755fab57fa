#!/usr/bin/env node
// `npm start`: the whole system on one machine. Builds the apps, checks PostgreSQL and RabbitMQ,
// creates the database and applies migrations, makes sure a demo merchant exists (and prints a
// fresh token for it), then runs the four services until Ctrl-C. Demo defaults
// (SANDBOX_SETTLE_MS=3000, CALLBACK_ALLOW_PRIVATE_HOSTS=true) apply only where the environment is silent.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import amqp from 'amqplib';
import pg from 'pg';
import pinoPretty from 'pino-pretty';

const root = path.resolve(import.meta.dirname, '..');
const env = { ...process.env };
env.SANDBOX_SETTLE_MS ??= '3000';
env.CALLBACK_ALLOW_PRIVATE_HOSTS ??= 'true';
// The services' own defaults (libs/config/src/local-defaults.json), read here to check the servers and print the addresses.
const defaults = JSON.parse(readFileSync(path.join(root, 'libs/config/src/local-defaults.json'), 'utf8'));
env.DATABASE_URL ??= defaults.DATABASE_URL;
env.AMQP_URL ??= defaults.AMQP_URL;
env.CHECKPOINT_DISABLE ??= '1';
// The services' heap bound (libs/config/src/node-options.json), unless the environment sets them.
env.NODE_OPTIONS ??= JSON.parse(readFileSync(path.join(root, 'libs/config/src/node-options.json'), 'utf8')).NODE_OPTIONS;
const generatedAdminToken = env.ADMIN_TOKEN ? undefined : randomBytes(24).toString('base64url');
env.ADMIN_TOKEN ??= generatedAdminToken;
// The gateway proves each request to transactions-svc and ui with this shared secret; a fresh one
// per start is enough for one machine (the services restart together).
env.INTERNAL_AUTH_SECRETS ??= randomBytes(32).toString('base64url');
// The internal services listen on loopback only: nobody else on the network can reach them, and
// the gateway (HOST, default 0.0.0.0) is the only way in. Set INTERNAL_HOST to change that.
const internalHost = env.INTERNAL_HOST ?? '127.0.0.1';

const SERVICES = [
  ['transactions-svc', 'TRANSACTIONS_PORT', 'INTERNAL_HOST', internalHost],
  ['callback-svc', 'CALLBACK_PORT', 'INTERNAL_HOST', internalHost],
  ['ui', 'UI_PORT', 'INTERNAL_HOST', internalHost],
  ['api-gateway', 'GATEWAY_PORT', 'HOST', env.HOST ?? '0.0.0.0'],
].map(([name, portVariable, hostVariable, host]) => ({ name, portVariable, hostVariable, host, port: env[portVariable] ?? String(defaults[portVariable]) }));
// What the services say when they cannot take their port (libs/http-kit/src/run-service.ts).
const LISTEN_REASONS = JSON.parse(readFileSync(path.join(root, 'libs/http-kit/src/listen-reasons.json'), 'utf8'));
// The gateway's and ui's upstreams follow the ports chosen above unless the environment names them
// (the services' own defaults are the default ports, which another stack may hold).
const dialHost = ['0.0.0.0', '::'].includes(internalHost) ? '127.0.0.1' : internalHost.includes(':') ? `[${internalHost}]` : internalHost;
env.TRANSACTIONS_URL ??= `http://${dialHost}:${SERVICES[0].port}`;
env.UI_URL ??= `http://${dialHost}:${SERVICES[2].port}`;

function step(msg) {
  console.error(`[start] ${msg}`);
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: root, env, stdio: ['ignore', opts.capture ? 'pipe' : 'inherit', 'inherit'], encoding: 'utf8' });
  if (res.status !== 0) {
    step(`failed: ${cmd} ${args.join(' ')}`);
    process.exit(res.status ?? 1);
  }
  return res.stdout;
}

function reachable(url, defaultPort) {
  const u = new URL(url);
  const port = Number(u.port || defaultPort);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port, timeout: 3000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  }).then((ok) => ({ ok, where: `${u.hostname}:${port}` }));
}

/** Codes of a connection that never reached a server (libs/config/src/unreachable-codes.json, shared with the services). */
const UNREACHABLE = new Set(JSON.parse(readFileSync(path.join(root, 'libs/config/src/unreachable-codes.json'), 'utf8')).codes);

/** One AMQP connection attempt: a port that accepts TCP may still not be RabbitMQ's, or refuse these credentials. */
async function brokerProblem(url) {
  const u = new URL(url);
  const where = `${u.hostname}:${u.port || 5672}`;
  try {
    const connection = await amqp.connect(url, { timeout: 3000 });
    connection.on('error', () => undefined);
    await connection.close();
    return undefined;
  } catch (error) {
    if (UNREACHABLE.has(error.code) || /timeout/i.test(error.message)) return `RabbitMQ is not reachable at ${where} (AMQP_URL)`;
    return `RabbitMQ at ${where} (AMQP_URL) did not accept a connection: ${error.message.split('\n')[0] || error.code || 'no AMQP handshake'}`;
  }
}

/** One PostgreSQL login: a port that accepts TCP may still refuse this role or password. */
async function postgresProblem(url) {
  const db = await reachable(url, 5432);
  if (!db.ok) return `PostgreSQL is not reachable at ${db.where} (DATABASE_URL)`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    if (error.code === '3D000') return undefined; // the database does not exist yet: it is created next
    const reason = error.message?.split('\n')[0] || error.code || 'no PostgreSQL handshake';
    return `PostgreSQL at ${db.where} (DATABASE_URL) did not accept a connection: ${reason}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why a service could not listen where it is told to (another process holds the port, say), or undefined. */
function portProblem({ name, port, host, portVariable, hostVariable }) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error) => {
      const why = LISTEN_REASONS[error.code] ?? error.message;
      resolve(`${name} cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port} (${portVariable}, ${hostVariable}): ${why}`);
    });
    try {
      probe.listen(Number(port), host, () => probe.close(() => resolve(undefined)));
    } catch {
      resolve(undefined); // not a port number: the service's own configuration check names the variable
    }
  });
}

async function checkDependencies() {
  const [db, mq, ...ports] = await Promise.all([postgresProblem(env.DATABASE_URL), brokerProblem(env.AMQP_URL), ...SERVICES.map(portProblem)]);
  const problems = [];
  if (db) problems.push(db);
  if (mq) problems.push(mq);
  problems.push(...ports.filter(Boolean));
  if (problems.length) {
    for (const p of problems) console.error(`[start] ${p}`);
    process.exit(1);
  }
}

async function demoMerchant() {
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  const { rows } = await client.query(`SELECT id, callback_signing_secret FROM merchants WHERE name = 'Demo merchant' ORDER BY created_at LIMIT 1`);
  await client.end();
  const cli = ['apps/transactions-svc/dist/cli/merchant.js'];
  if (!rows[0]) return JSON.parse(run('node', [...cli, 'create', '--name', 'Demo merchant'], { capture: true }).trim());
  // Only a hash of a token is stored, so an existing demo merchant gets a fresh token each start.
  // rotate-token shows no secret (a secret is shown once, when issued); for the demo, which prints
  // its credentials at every start, the one in force is read back.
  const rotated = JSON.parse(run('node', [...cli, 'rotate-token', '--merchant', rows[0].id], { capture: true }).trim());
  return { ...rotated, callbackSigningSecret: rows[0].callback_signing_secret };
}

/**
 * One HTTP exchange through node:http. Not fetch: fetch refuses the WHATWG "bad ports" (6000,
 * 6665–6669, 10080, …), which a *_PORT variable may well name (found by an outside audit).
 */
function exchange(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer within 5 s'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

/** Resolves with null once the service's /readyz answers 200, or with what it last said. */
async function waitReady(port, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await exchange(`http://127.0.0.1:${port}/readyz`);
      if (res.status === 200) return null;
      last = `${res.status} ${res.text.slice(0, 300)}`;
    } catch (error) {
      last = `no answer (${error.code ?? error.message})`;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return last;
}

// The services log one JSON object a line (what a log pipeline wants); a person at a terminal gets
// them through pino-pretty: time, level, message, then the fields. LOG_FORMAT=json keeps the JSON.
const pretty =
  env.LOG_FORMAT === 'json'
    ? undefined
    : pinoPretty.prettyFactory({
        colorize: Boolean(process.stdout.isTTY),
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
        singleLine: true,
      });

/** One line of a service's output as a person reads it; a line that is not JSON is left alone. */
function humanLine(line) {
  if (!pretty || !line.startsWith('{')) return line;
  try {
    return pretty(line).trimEnd();
  } catch {
    return line;
  }
}

function startService({ name, host }) {
  const cwd = path.join(root, 'apps', name);
  const child = spawn(process.execPath, ['--enable-source-maps', '--require', './dist/instrumentation.js', 'dist/main.js'], {
    cwd,
    env: { ...env, HOST: host },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `${name.padEnd(16)} |`;
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream.on('data', (chunk) => {
      buf += chunk;
      const lines = buf.split('\n');
      buf = lines.pop();
      // A pretty line may span several (an error's stack): each keeps the service's prefix.
      for (const line of lines) for (const out of humanLine(line).split('\n')) process.stdout.write(`${prefix} ${out}\n`);
    });
  }
  return child;
}

/**
 * A demo callback receiver inside this process (not a service): it logs each callback and answers
 * 200, so a fresh demo shows deliveries end to end. It is wired to the demo merchant only while
 * that merchant has no callback URL of its own.
 */
async function startDemoReceiver() {
  const port = Number(env.DEMO_RECEIVER_PORT ?? 3009);
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let event = {};
      try {
        event = JSON.parse(body);
      } catch {}
      process.stdout.write(`${'demo-receiver'.padEnd(16)} | ${event.type} ${event.id} seq=${event.sequence} tx=${event.data?.id}\n`);
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  server.unref();
  return `http://127.0.0.1:${port}`;
}

async function wireDemoCallbacks(gateway, token, receiverUrl) {
  const headers = { serviceApiToken: token, 'content-type': 'application/json' };
  const urls = JSON.parse((await exchange(`${gateway}/api/getCallbackUrls`, { headers })).text);
  if (urls.depositCallbackUrl || urls.withdrawCallbackUrl) return false;
  for (const kind of ['Deposit', 'Withdraw']) {
    const res = await exchange(`${gateway}/api/updateCallbackUrl${kind}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ url: `${receiverUrl}/demo/${kind.toLowerCase()}` }),
    });
    if (res.status !== 200) return false;
  }
  return true;
}

await checkDependencies();
step('building (nx run-many -t build)…');
run('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static']);
step('applying migrations…');
run('node', ['apps/transactions-svc/dist/cli/migrate.js', 'deploy']);
const demo = await demoMerchant();

const children = SERVICES.map((s) => ({ ...s, child: startService(s) }));
let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  step('stopping services…');
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
  Promise.all(children.map(({ child }) => (child.exitCode !== null ? null : new Promise((r) => child.once('exit', r))))).then(() =>
    process.exit(code),
  );
}
for (const { name, child } of children) {
  child.once('exit', (code, signal) => {
    if (!stopping) {
      step(`${name} exited (${signal ?? code}); stopping the rest`);
      stopAll(1);
    }
  });
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

const notReady = await Promise.all(children.map((s) => waitReady(s.port)));
if (notReady.some((why) => why !== null)) {
  children.forEach((s, i) => notReady[i] !== null && step(`${s.name} not ready in time on :${s.port}; /readyz: ${notReady[i]}`));
  stopAll(1);
} else {
  const gw = `http://127.0.0.1:${SERVICES[3].port}`;
  const receiverUrl = await startDemoReceiver().catch(() => undefined);
  const wired = receiverUrl ? await wireDemoCallbacks(gw, demo.apiToken, receiverUrl).catch(() => false) : false;
  console.log(`
Deposit & Withdraw is running.
  API            ${gw}/api   (header serviceApiToken)
  Viewer         ${gw}/ui
  API docs       ${gw}/docs
  Operator API   http://127.0.0.1:${SERVICES[0].port}/internal/transactions/{id}/status (header x-admin-token)
Demo merchant (shown once; a new token is issued at every start):
  ${JSON.stringify(demo)}
  serviceApiToken: ${demo.apiToken}${generatedAdminToken ? `\n  ADMIN_TOKEN:     ${generatedAdminToken} (generated; set ADMIN_TOKEN to choose one)` : ''}
Money: the demo merchant has no credit limit, so a withdraw is refused (422 insufficient_funds) until a
deposit has settled; GET ${gw}/api/getBalance shows available, held and incoming.
Sandbox settler: ${env.SANDBOX_SETTLE_MS === '0' ? 'off' : `${env.SANDBOX_SETTLE_MS} ms`}.${wired ? `\nDemo callbacks: the demo merchant's callback URLs point at ${receiverUrl}/demo/… (this process logs them as "demo-receiver").` : ''}
Ctrl-C stops everything.
`);
}
