/** A small HTML page for an error, carrying the same facts as the problem+json body. */
import type { Problem } from '@dw/contracts';
import type { Assets } from '../assets';
import { html } from './html';
import { layout } from './layout';

export function renderErrorPage(assets: Assets, problem: Problem): string {
  const errors = problem.errors?.length
    ? html`<ul class="field-errors">${problem.errors.map((e) => html`<li><code>${e.path}</code> ${e.message}</li>`)}</ul>`
    : '';
  return layout(assets, problem.title, html`<h1>${problem.status} ${problem.title}</h1>
<p>${problem.detail}</p>
${errors}
<p class="muted">Request ID: <code>${problem.requestId}</code></p>
<p><a href="/ui">Open the transactions page</a></p>`);
}
