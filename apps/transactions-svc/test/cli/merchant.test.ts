import { createHash } from 'node:crypto';
import { API_TOKEN_PATTERN } from '@dw/contracts';
import { DEFAULT_AMQP_URL } from '@dw/config';
import { openTokenRotationPublisher } from '@dw/messaging';
import pg from 'pg';
import { runMerchantCli } from '../../src/cli/merchant-commands';
import { apiTokenHash } from '@dw/contracts';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { removeCliBuild, runCli } from './run-cli';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOKEN = API_TOKEN_PATTERN; // base64url of 32 bytes, no padding: what the gateway accepts before any lookup
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/; // base64 of 32 bytes

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('merchant_cli');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  removeCliBuild();
  await client?.end();
  await db?.drop();
});

const merchant = (...args: string[]) => runCli('merchant', args, { DATABASE_URL: db.url });

/** The single JSON line a successful command prints. */
function credentials(stdout: string): Record<string, string> {
  const lines = stdout.split('\n');
  expect(lines).toHaveLength(2); // one line, then the final newline
  expect(lines[1]).toBe('');
  return JSON.parse(lines[0]!) as Record<string, string>;
}

async function stored(merchantId: string) {
  const { rows } = await client.query<{ name: string; api_token_hash: string; callback_signing_secret: string }>(
    'SELECT name, api_token_hash, callback_signing_secret FROM merchants WHERE id = $1',
    [merchantId],
  );
  return rows[0]!;
}

async function createMerchant(name = 'Acme Ltd') {
  const result = await merchant('create', '--name', name);
  expect(result.code).toBe(0);
  return credentials(result.stdout);
}

describe('merchant create', () => {
  it('prints exactly one JSON line with merchantId, apiToken and callbackSigningSecret', async () => {
    const result = await merchant('create', '--name', 'Acme Ltd');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const issued = credentials(result.stdout);
    expect(Object.keys(issued)).toEqual(['merchantId', 'apiToken', 'callbackSigningSecret']);
    expect(issued.merchantId).toMatch(UUID);
    expect(issued.apiToken).toMatch(TOKEN);
    expect(issued.callbackSigningSecret).toMatch(SECRET);
  });

  it('stores the hex SHA-256 of the token, never the token, and the secret as issued', async () => {
    const issued = await createMerchant('Hash Check Ltd');

    const row = await stored(issued.merchantId!);
    expect(row.name).toBe('Hash Check Ltd');
    expect(row.api_token_hash).toBe(createHash('sha256').update(issued.apiToken!).digest('hex'));
    expect(apiTokenHash(issued.apiToken!)).toBe(row.api_token_hash);
    expect(row.callback_signing_secret).toBe(issued.callbackSigningSecret);
    const { rows } = await client.query("SELECT 1 FROM merchants WHERE row_to_json(merchants)::text LIKE '%' || $1 || '%'", [issued.apiToken]);
    expect(rows).toHaveLength(0);
  });

  it('issues different credentials to each merchant', async () => {
    const [a, b] = [await createMerchant('A'), await createMerchant('B')];
    expect(a.merchantId).not.toBe(b.merchantId);
    expect(a.apiToken).not.toBe(b.apiToken);
    expect(a.callbackSigningSecret).not.toBe(b.callbackSigningSecret);
  });
});

describe('merchant rotate-token', () => {
  it('replaces the stored hash with the new token and prints it, and not the unchanged secret (shown once, when issued)', async () => {
    const issued = await createMerchant();

    const result = await merchant('rotate-token', '--merchant', issued.merchantId!);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const rotated = credentials(result.stdout);
    expect(Object.keys(rotated)).toEqual(['merchantId', 'apiToken', 'callbackSigningSecret']);
    expect(rotated.merchantId).toBe(issued.merchantId);
    expect(rotated.apiToken).toMatch(TOKEN);
    expect(rotated.apiToken).not.toBe(issued.apiToken);
    expect(rotated.callbackSigningSecret).toBeNull();
    expect(result.stdout).not.toContain(issued.callbackSigningSecret!);
    expect((await stored(issued.merchantId!)).api_token_hash).toBe(apiTokenHash(rotated.apiToken!));
  });

  it('rotates nothing, and says why, when RabbitMQ cannot be reached to tell the gateways', async () => {
    const issued = await createMerchant();

    const result = await runCli('merchant', ['rotate-token', '--merchant', issued.merchantId!], {
      DATABASE_URL: db.url,
      AMQP_URL: 'amqp://guest:pw-456@127.0.0.1:1',
    });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^merchant: RabbitMQ is not reachable at 127\.0\.0\.1:1 \(AMQP_URL\): .*nothing was rotated/);
    expect(result.stderr).not.toContain('pw-456');
    expect((await stored(issued.merchantId!)).api_token_hash).toBe(apiTokenHash(issued.apiToken!));
  });

  it('still prints the new token, and exits 3, when the broker fails between the rotation and its broadcast', async () => {
    const issued = await createMerchant();
    const publisher = await openTokenRotationPublisher(DEFAULT_AMQP_URL, `merchant-cli-test-${process.pid}.`);
    await publisher.close(); // the broker connection is gone by the time the rotation is published
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await runMerchantCli(['rotate-token', '--merchant', issued.merchantId!], { DATABASE_URL: db.url }, { openTokenBroadcast: async () => publisher });

      expect(code).toBe(3);
      const rotated = credentials(stdout.mock.calls.map(([chunk]) => String(chunk)).join(''));
      expect((await stored(issued.merchantId!)).api_token_hash).toBe(apiTokenHash(rotated.apiToken!));
      expect(stderr.mock.calls.map(([chunk]) => String(chunk)).join('')).toMatch(/the token was rotated, but the gateways were not told .*up to TOKEN_CACHE_TTL_MS/);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
  });
});

describe('merchant rotate-secret', () => {
  it('replaces the secret, keeps the token, and prints the new secret in the same shape, its token null (only its hash is kept)', async () => {
    const issued = await createMerchant();

    const result = await merchant('rotate-secret', '--merchant', issued.merchantId!);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const rotated = credentials(result.stdout);
    expect(Object.keys(rotated)).toEqual(['merchantId', 'apiToken', 'callbackSigningSecret']);
    expect(rotated.apiToken).toBeNull();
    expect(rotated.callbackSigningSecret).toMatch(SECRET);
    expect(rotated.callbackSigningSecret).not.toBe(issued.callbackSigningSecret);
    const row = await stored(issued.merchantId!);
    expect(row.callback_signing_secret).toBe(rotated.callbackSigningSecret);
    expect(row.api_token_hash).toBe(apiTokenHash(issued.apiToken!));
  });

  /** The previous secret and the seconds left of its overlap, by the database's clock. */
  async function overlap(merchantId: string) {
    const { rows } = await client.query<{ previous: string | null; seconds_left: number | null }>(
      `SELECT previous_signing_secret AS previous,
              extract(epoch FROM previous_signing_secret_expires_at - now())::float8 AS seconds_left
         FROM merchants WHERE id = $1`,
      [merchantId],
    );
    return rows[0]!;
  }

  it('keeps the old secret signing for 24 h by default', async () => {
    const issued = await createMerchant();
    const result = await merchant('rotate-secret', '--merchant', issued.merchantId!);
    expect(result.code).toBe(0);
    const row = await overlap(issued.merchantId!);
    expect(row.previous).toBe(issued.callbackSigningSecret);
    expect(row.seconds_left).toBeGreaterThan(86_400 - 60);
    expect(row.seconds_left).toBeLessThanOrEqual(86_400);
  });

  it.each([
    ['90s', 90],
    ['30m', 1800],
    ['2h', 7200],
    ['7d', 604_800],
    ['600s', 600],
  ])('--overlap %s keeps it for %i seconds', async (text, seconds) => {
    const issued = await createMerchant();
    expect((await merchant('rotate-secret', '--merchant', issued.merchantId!, '--overlap', text)).code).toBe(0);
    const row = await overlap(issued.merchantId!);
    expect(row.previous).toBe(issued.callbackSigningSecret);
    expect(row.seconds_left).toBeGreaterThan(seconds - 60);
    expect(row.seconds_left).toBeLessThanOrEqual(seconds);
  });

  it('--overlap 0 revokes the old secret at once', async () => {
    const issued = await createMerchant();
    expect((await merchant('rotate-secret', '--merchant', issued.merchantId!, '--overlap', '0')).code).toBe(0);
    expect(await overlap(issued.merchantId!)).toEqual({ previous: null, seconds_left: null });
  });

  it('a second rotation keeps only the secret it replaces: never more than two sign', async () => {
    const issued = await createMerchant();
    const first = credentials((await merchant('rotate-secret', '--merchant', issued.merchantId!)).stdout);
    const second = credentials((await merchant('rotate-secret', '--merchant', issued.merchantId!)).stdout);
    expect((await stored(issued.merchantId!)).callback_signing_secret).toBe(second.callbackSigningSecret);
    expect((await overlap(issued.merchantId!)).previous).toBe(first.callbackSigningSecret);
  });
});

describe('merchant bad usage', () => {
  it.each([
    [['fly'], 2, /unknown command fly/],
    // Named alone, not with node's advice to write `-- "--nmae"` (whose quotes do not pair).
    [['create', '--nmae', 'X'], 2, /^merchant: unknown option --nmae\n/],
    [[], 2, /missing command/],
    [['create'], 2, /--name/],
    [['create', '--name', '   '], 2, /--name/],
    [['create', '--name', 'x'.repeat(201)], 2, /--name must be 1–200 printable characters/],
    [['create', '--name', 'Acme\u0007Ltd'], 2, /--name must be 1–200 printable characters/],
    [['rotate-secret', '--merchant', '00000000-0000-4000-8000-000000000000', '--overlap', '-5'], 2, /--overlap must be a duration/],
    [['rotate-token'], 2, /--merchant/],
    [['rotate-token', '--merchant', 'not-a-uuid'], 2, /UUID/],
    [['rotate-secret', '--merchant', '00000000-0000-4000-8000-000000000000', '--overlap', '8d'], 2, /at most 7d/],
    [['rotate-secret', '--merchant', '00000000-0000-4000-8000-000000000000', '--overlap', '-1h'], 2, /--overlap/],
    [['rotate-secret', '--merchant', '00000000-0000-4000-8000-000000000000', '--overlap', '1 week'], 2, /--overlap must be a duration/],
    // A number without its unit: 24 meant as hours would revoke the old secret after 24 seconds.
    [['rotate-secret', '--merchant', '00000000-0000-4000-8000-000000000000', '--overlap', '24'], 2, /--overlap must be a duration like 24h/],
    [['rotate-token', '--merchant', '00000000-0000-4000-8000-000000000000', '--overlap', '1h'], 2, /only to rotate-secret/],
    [['rotate-secret', '--merchant', '00000000-0000-4000-8000-000000000000'], 1, /no merchant with id 00000000-0000-4000-8000-000000000000/],
    // A repeated option is refused, not resolved to its last value (which merchant, which amount?).
    [['set-credit-limit', '--merchant', '00000000-0000-4000-8000-000000000000', '--merchant', '00000000-0000-4000-8000-000000000001', '--limit', '1'], 2, /--merchant is given twice/],
    [['adjust-balance', '--merchant', '00000000-0000-4000-8000-000000000000', '--currency', 'USD', '--amount', '1', '--amount=900', '--reason', 'r', '--reference', 'x'], 2, /--amount is given twice/],
    [['create', '--name', 'A', '--name', 'B'], 2, /--name is given twice/],
  ])('merchant %j prints nothing on stdout, explains on stderr and exits %i', async (args, code, message) => {
    const result = await merchant(...args);

    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('names PostgreSQL and its address when it is unreachable', async () => {
    const result = await runCli('merchant', ['create', '--name', 'x'], { DATABASE_URL: 'postgresql://postgres:pw-123@127.0.0.1:1/x' });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/PostgreSQL.*127\.0\.0\.1:1/);
    expect(result.stderr).not.toContain('pw-123');
  });

  it.each(['migrate', 'merchant'] as const)('%s names PostgreSQL and its address when it refuses the login', async (cli) => {
    const args = cli === 'migrate' ? [] : ['create', '--name', 'x'];
    const result = await runCli(cli, args, { DATABASE_URL: 'postgresql://no_such_role_dw:pw-123@127.0.0.1:5432/x' });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`${cli}: PostgreSQL at 127.0.0.1:5432 (DATABASE_URL): role "no_such_role_dw" does not exist\n`);
  });
});
