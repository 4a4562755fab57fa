/** A small HTML page for an error, carrying the same facts as the problem+json body. */
import type { Problem } from '@dw/contracts';
import type { Assets } from '../assets';
import { html, type SafeHtml } from './html';
import { layout } from './layout';

/** The error's facts; /ui's script shows this same fragment in its status area. */
export function errorFragment(problem: Problem): SafeHtml {
  const errors = problem.errors?.length
    ? html`<ul class="field-errors">${problem.errors.map((e) => html`<li><code>${e.path}</code> ${e.message}</li>`)}</ul>`
    : '';
  return html`<div data-fragment="error" data-status="${problem.status}">
<p>${problem.detail}</p>
${errors}
<p class="muted">Request ID: <code>${problem.requestId}</code></p>
</div>`;
}

export function renderErrorPage(assets: Assets, problem: Problem): string {
  return layout(assets, problem.title, html`<h1>${problem.status} ${problem.title}</h1>
${errorFragment(problem)}
<p><a href="/ui">Open the transactions page</a></p>`);
}
