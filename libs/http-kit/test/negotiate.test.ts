/** Accept → JSON, HTML or CSV for /ui/viewTransaction (the ui answers by it, the gateway counts list pages by it). */
import { negotiate } from '../src/negotiate';

describe('content negotiation', () => {
  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/*', 'json'],
    ['image/png', 'json'],
    ['text/html', 'html'],
    ['text/*', 'html'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'html'],
    ['application/json, text/html', 'json'],
    ['text/html, application/json', 'html'],
    ['application/json;q=0.5, text/html', 'html'],
    ['text/html;q=0, */*', 'json'],
    ['*/*, text/html', 'html'],
    ['text/csv', 'csv'],
    ['text/csv, application/json', 'csv'],
    ['application/json, text/csv', 'json'],
    ['text/html, text/csv;q=0.5', 'html'],
    ['text/csv;q=0, */*', 'json'],
    // CSV only when text/csv is named and ranked at least as high as JSON and HTML, wildcards included.
    ['text/csv; q=0.9, */*', 'json'],
    ['text/csv;q=0.9, text/*', 'html'],
    ['text/csv;q=0.5, application/*', 'json'],
    ['text/csv, */*', 'csv'],
    ['*/*, text/csv', 'csv'],
    ['text/csv, */*;q=0.8', 'csv'],
    ['text/csv;q=0.8, */*;q=0.8', 'csv'],
    ['*/*;q=0.9, text/csv;q=0.9, application/json;q=0.9', 'csv'],
    ['application/json;q=0.9, text/csv;q=0.9, */*;q=0.1', 'json'],
  ] as const)('Accept %p gives %s', (accept, expected) => {
    expect(negotiate(accept)).toBe(expected);
  });
});

