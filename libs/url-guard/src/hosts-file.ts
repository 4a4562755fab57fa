/**
 * Names from the hosts file (/etc/hosts), which c-ares' resolve* queries do not read but
 * getaddrinfo does: `localhost`, `vm` or a name an operator pinned there keep resolving. Reading
 * a small local file is quick and bounded, unlike a nameserver.
 */
import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';

export interface HostsEntry {
  address: string;
  family: 4 | 6;
}

export class HostsFile {
  private entries = new Map<string, HostsEntry[]>();
  private loadedMtimeMs = -1;
  private checkedAt = 0;

  constructor(
    private readonly path = '/etc/hosts',
    /** How long a read is trusted before the file's mtime is checked again. */
    private readonly recheckMs = 5_000,
  ) {}

  /** The addresses the file gives `hostname` (case-insensitive, trailing dot ignored); [] if none. */
  async lookup(hostname: string): Promise<HostsEntry[]> {
    await this.refresh();
    return this.entries.get(hostname.toLowerCase().replace(/\.$/, '')) ?? [];
  }

  private refreshing: Promise<void> | undefined;

  /** One read at a time; callers arriving meanwhile wait for it rather than see an empty map. */
  private refresh(): Promise<void> {
    if (Date.now() - this.checkedAt < this.recheckMs) return Promise.resolve();
    this.refreshing ??= this.reload().finally(() => {
      this.checkedAt = Date.now();
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async reload(): Promise<void> {
    try {
      const { mtimeMs } = await stat(this.path);
      if (mtimeMs === this.loadedMtimeMs) return;
      this.entries = parseHosts(await readFile(this.path, 'utf8'));
      this.loadedMtimeMs = mtimeMs;
    } catch {
      this.entries = new Map(); // no hosts file: every name goes to DNS
    }
  }
}

export function parseHosts(text: string): Map<string, HostsEntry[]> {
  const byName = new Map<string, HostsEntry[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (family !== 4 && family !== 6) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      const list = byName.get(key) ?? [];
      if (!list.some((e) => e.address === address)) list.push({ address: address!, family });
      byName.set(key, list);
    }
  }
  return byName;
}
