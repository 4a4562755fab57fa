import { assetHref, type Assets } from '../assets';
import { html, type SafeHtml } from './html';

/**
 * The document around every server-rendered page: stylesheet only, no script, nothing inline.
 * The empty data: icon stops the browser asking for /favicon.ico (a 404 logged as a console error
 * on every page); the CSP's img-src allows data:.
 */
export function layout(assets: Assets, title: string, main: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${title} · Deposit &amp; Withdraw</title>
<link rel="stylesheet" href="${assetHref(assets, 'app.css')}">
</head>
<body>
<header class="site-header"><a class="brand" href="/ui">Deposit &amp; Withdraw</a></header>
<main id="main">
${main}
</main>
</body>
</html>
`.value;
}
