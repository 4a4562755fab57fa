/**
 * The page's static files (public/app.js, public/app.css, and htmx from its npm package: served by
 * the ui itself, never from a CDN, so the CSP stays 'self'), read once at boot. Pages link them with
 * a content hash in the query (`app.css?v=…`), so a deploy changes the URL and browsers may cache
 * each version for a day without ever running a stale script against a new page.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// This file sits directly in src/ and is bundled into dist/main.js, so `..` is the app folder both
// when tests run the sources and when `npm start` runs the bundle.
export const PUBLIC_DIR = path.resolve(__dirname, '..', 'public');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
  /** The path pages link to, with the content hash. */
  href: string;
}

export type Assets = ReadonlyMap<string, Asset>;

export const ASSET_NAMES = ['htmx.min.js', 'app.js', 'app.css'] as const;

/** Where each asset is read from: the app's own files in `dir`, htmx from node_modules. */
function assetPath(dir: string, name: (typeof ASSET_NAMES)[number]): string {
  return name === 'htmx.min.js' ? require.resolve('htmx.org/dist/htmx.min.js') : path.join(dir, name);
}

export function loadAssets(dir: string = PUBLIC_DIR): Assets {
  const assets = new Map<string, Asset>();
  for (const name of ASSET_NAMES) {
    const body = readFileSync(assetPath(dir, name));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
    assets.set(name, {
      body,
      contentType: CONTENT_TYPES[path.extname(name)]!,
      etag: `"${hash}"`,
      href: `/ui/assets/${name}?v=${hash}`,
    });
  }
  return assets;
}

export function assetHref(assets: Assets, name: (typeof ASSET_NAMES)[number]): string {
  return assets.get(name)!.href;
}
