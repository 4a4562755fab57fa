import { Writable } from 'node:stream';

/** A pino destination that keeps each JSON line written to it, parsed. */
export function collectLines() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}
