/**
 * CPU time per process over an interval, from /proc (utime + stime, in ms). The services are
 * counted by pid; PostgreSQL, RabbitMQ and Redis by process name (every backend of the machine's
 * server, so run it when nothing else uses them), and the bench's own children by pid.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function stat(pid: number): { ppid: number; own: number; children: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name: state ppid … utime(11) stime(12) cutime(13) cstime(14), 0-based.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ').map(Number);
    return { ppid: f[1]!, own: (f[11]! + f[12]!) * TICK_MS, children: (f[13]! + f[14]!) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** A process's own CPU plus that of its reaped children (a PostgreSQL backend that ended is counted in the postmaster). */
function cpuMs(pid: number): number | undefined {
  const s = stat(pid);
  return s && s.own + s.children;
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

const SERVERS: Record<string, RegExp> = { postgres: /^postgres/, rabbitmq: /^(beam\.smp|erl_child_setup|inet_gethost)$/, redis: /^redis-server/ };

function byName(): Record<string, number> {
  const matched = new Map<number, { name: string; ppid: number; own: number; children: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const comm = commOf(pid);
    const name = Object.keys(SERVERS).find((n) => SERVERS[n]!.test(comm));
    const s = name ? stat(pid) : undefined;
    if (name && s) matched.set(pid, { name, ...s });
  }
  const out: Record<string, number> = {};
  for (const p of matched.values()) {
    // A server's top process also carries its reaped children; a child carries only its own.
    const ms = matched.has(p.ppid) ? p.own : p.own + p.children;
    out[p.name] = (out[p.name] ?? 0) + ms;
  }
  return out;
}

export class CpuSampler {
  private start?: Record<string, number>;
  constructor(private readonly pids: () => Record<string, number | undefined>) {}

  private snapshot(): Record<string, number> {
    const out = byName();
    for (const [name, pid] of Object.entries(this.pids())) {
      const ms = pid ? cpuMs(pid) : undefined;
      if (ms !== undefined) out[name] = ms;
    }
    return out;
  }

  begin(): this {
    this.start = this.snapshot();
    return this;
  }

  /** CPU ms used by each process since begin(). */
  end(): Record<string, number> {
    const now = this.snapshot();
    const out: Record<string, number> = {};
    for (const [name, ms] of Object.entries(now)) out[name] = ms - (this.start?.[name] ?? 0);
    return out;
  }
}
