/**
 * The per-token rate limit (docs/api.md#errors): a token bucket of RATE_LIMIT_PER_SECOND with a burst of
 * the same size. With REDIS_URL the bucket lives in Redis and one atomic Lua script takes from it,
 * so the limit holds across every gateway replica (clocks: Redis's own TIME, never the replicas').
 * Without it, each replica keeps buckets in memory.
 *
 * Redis down: `open` (the default) falls back to this replica's in-memory bucket, so merchants keep
 * being served and stay limited per replica; `closed` answers 503 until Redis is back.
 */
import { serviceUnavailable } from '@dw/http-kit';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { TokenBuckets } from './token-bucket';

export interface RateLimiter {
  /** 0 when the request may pass (and is counted), else the whole seconds to wait. */
  take(key: string): Promise<number>;
  sweep(): void;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets: TokenBuckets;
  constructor(perSecond: number, now: () => number = Date.now) {
    this.buckets = new TokenBuckets(perSecond, now);
  }
  async take(key: string): Promise<number> {
    return this.buckets.take(key);
  }
  sweep(): void {
    this.buckets.sweep();
  }
}

// KEYS[1] bucket; ARGV[1] capacity = refill per second. Returns the whole seconds to wait (0 = passed).
const TOKEN_BUCKET_LUA = `
local rate = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or rate
local at = tonumber(b[2]) or now
tokens = math.min(rate, tokens + math.max(0, now - at) / 1000 * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.max(1, math.ceil((1 - tokens) / rate))
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
-- A bucket refills completely within a second; keep it two so an idle key leaves no trace.
redis.call('PEXPIRE', KEYS[1], 2000)
return wait
`;

type RedisWithBucket = Redis & { dwTokenBucket(key: string, rate: number): Promise<number> };

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithBucket;
  private readonly fallback: TokenBuckets;
  private lastWarn = 0;

  constructor(
    redis: Redis,
    private readonly opts: { prefix: string; perSecond: number; whenDown: 'open' | 'closed'; logger: FastifyBaseLogger },
  ) {
    redis.defineCommand('dwTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
    this.redis = redis as RedisWithBucket;
    this.fallback = new TokenBuckets(opts.perSecond);
  }

  async take(key: string): Promise<number> {
    try {
      return Number(await this.redis.dwTokenBucket(`${this.opts.prefix}rl:${key}`, this.opts.perSecond));
    } catch (err) {
      this.warn(err);
      if (this.opts.whenDown === 'closed') throw serviceUnavailable('The rate limiter is unavailable; retry later.');
      return this.fallback.take(key);
    }
  }

  sweep(): void {
    this.fallback.sweep();
  }

  private warn(err: unknown): void {
    // One line every 10 s at most: an outage must not flood the log with one line per request.
    if (Date.now() - this.lastWarn < 10_000) return;
    this.lastWarn = Date.now();
    this.opts.logger.warn({ err, whenDown: this.opts.whenDown }, 'rate limit store (Redis) unavailable');
  }
}
