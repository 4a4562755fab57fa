// The interactive transactions page. Plain JavaScript, no framework, no build step.
// Safety rules this file keeps:
// - the API token lives only in this tab's sessionStorage and travels only in the serviceApiToken
//   header; never in a URL, a cookie or the console;
// - every value from the API reaches the DOM as a text node (the el() helper), never parsed as HTML.
'use strict';

(function () {
  var TOKEN_KEY = 'dw.serviceApiToken';
  var KNOWN_STATUSES = ['pending', 'processing', 'completed', 'failed', 'succeeded', 'retrying', 'skipped'];

  var $ = function (id) {
    return document.getElementById(id);
  };

  // ---- DOM building -------------------------------------------------------------------------

  /** el('td', {class: 'x'}, 'text', childNode…): strings become text nodes, never markup. */
  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (attrs[name] !== undefined && attrs[name] !== null) node.setAttribute(name, String(attrs[name]));
    });
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function append(node, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) return child.forEach(function (c) { append(node, c); });
    node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }

  function badge(status) {
    var cls = KNOWN_STATUSES.indexOf(status) >= 0 ? 'badge-' + status : 'badge-unknown';
    return el('span', { class: 'badge ' + cls }, status);
  }

  // ---- Times ----------------------------------------------------------------------------------

  var relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  var UNITS = [['year', 31536000], ['month', 2592000], ['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]];

  function relativeTime(iso) {
    var seconds = (new Date(iso).getTime() - Date.now()) / 1000;
    if (isNaN(seconds)) return '';
    for (var i = 0; i < UNITS.length; i++) {
      if (Math.abs(seconds) >= UNITS[i][1] || i === UNITS.length - 1) {
        return relativeFormat.format(Math.round(seconds / UNITS[i][1]), UNITS[i][0]);
      }
    }
    return '';
  }

  function absoluteTime(iso) {
    var d = new Date(iso);
    return isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  }

  /** Relative time first ("3 minutes ago"), the absolute local time under it, the ISO time on hover. */
  function timeNode(iso) {
    return el('time', { datetime: iso, title: iso },
      el('span', { class: 'relative' }, relativeTime(iso)), ' ',
      el('span', { class: 'absolute muted' }, absoluteTime(iso)));
  }

  /** The amount exactly as the API sent it (a decimal string), never through a float. */
  function money(tx) {
    return el('span', { class: 'money' }, el('span', { class: 'amount' }, tx.amount), ' ', el('span', { class: 'currency' }, tx.currency));
  }

  // ---- Token ----------------------------------------------------------------------------------

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }

  function signOut(message) {
    stopPolling();
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage disabled: nothing kept */ }
    state.page = null;
    state.cursors = [null];
    state.index = 0;
    $('token').value = '';
    $('list-table').replaceChildren();
    $('detail-body').replaceChildren();
    showSignin(message);
  }

  // ---- API calls ------------------------------------------------------------------------------

  /** GET /ui/viewTransaction; resolves {status, body, retryAfter} or rejects on a network failure. */
  function api(params, signal) {
    var query = new URLSearchParams();
    Object.keys(params).forEach(function (k) {
      if (params[k] !== undefined && params[k] !== null && params[k] !== '') query.set(k, params[k]);
    });
    return fetch('/ui/viewTransaction?' + query.toString(), {
      headers: { Accept: 'application/json', serviceApiToken: token() || '' },
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
      signal: signal,
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (body) {
        return { status: res.status, body: body, retryAfter: res.headers.get('Retry-After') };
      });
    });
  }

  /** A problem answer → a message that says what to do; 401 sends the user back to the token form. */
  function problemMessage(res, what) {
    var p = res.body || {};
    if (res.status === 400) {
      var fields = (p.errors || []).map(function (e) { return e.path.replace(/^querystring:\//, '') + ' ' + e.message; });
      return 'These filters are not valid' + (fields.length ? ': ' + fields.join('; ') : '') + '. Fix them and apply again.';
    }
    if (res.status === 404) return 'No ' + what + ' with this id for your account. Go back to the list.';
    if (res.status === 429) return 'Too many requests. Wait ' + (res.retryAfter || 'a few') + ' seconds, then retry.';
    if (res.status === 503) return 'The service is unavailable right now. Retry in a moment.';
    return 'Something went wrong (' + res.status + (p.requestId ? ', request ' + p.requestId : '') + '). Retry in a moment.';
  }

  var NETWORK_ERROR = 'Could not reach the server. Check your connection, then retry.';
  var BAD_TOKEN = 'The token is wrong (or was rotated). Paste a current API token.';

  // ---- Status area ----------------------------------------------------------------------------

  function setStatus(box, kind, text, retry) {
    box.replaceChildren();
    box.className = 'status' + (kind ? ' ' + kind : '');
    if (!text) return;
    append(box, el('p', {}, text));
    if (retry) {
      var button = el('button', { type: 'button', class: 'secondary' }, 'Retry');
      button.addEventListener('click', retry);
      append(box, button);
    }
  }

  // ---- List -----------------------------------------------------------------------------------

  var state = { filters: {}, cursors: [null], index: 0, page: null, seq: 0, controller: null, detailId: null, poll: null };

  function readFilters() {
    var form = $('filters');
    var toIso = function (value) {
      if (!value) return undefined;
      var d = new Date(value); // datetime-local has no zone: it is the user's local time
      return isNaN(d.getTime()) ? undefined : d.toISOString();
    };
    return {
      type: form.elements.type.value || undefined,
      status: form.elements.status.value || undefined,
      orderId: form.elements.orderId.value || undefined,
      from: toIso(form.elements.from.value),
      to: toIso(form.elements.to.value),
      limit: form.elements.limit.value,
    };
  }

  /** One request at a time: a newer request aborts the older one, and late answers are dropped. */
  function startRequest() {
    if (state.controller) state.controller.abort();
    state.controller = typeof AbortController === 'function' ? new AbortController() : null;
    state.seq += 1;
    return { seq: state.seq, signal: state.controller ? state.controller.signal : undefined };
  }

  function loadList() {
    var req = startRequest();
    var params = Object.assign({}, state.filters, { cursor: state.cursors[state.index] });
    var box = $('list-status');
    setStatus(box, 'loading', 'Loading transactions…');
    $('list-table').setAttribute('aria-busy', 'true');
    api(params, req.signal).then(function (res) {
      if (req.seq !== state.seq) return;
      $('list-table').removeAttribute('aria-busy');
      if (res.status === 401) return signOut(BAD_TOKEN);
      if (res.status !== 200) return setStatus(box, 'error', problemMessage(res, 'transaction'), loadList);
      state.page = res.body;
      setStatus(box, '', '');
      renderList();
    }, function (err) {
      if (req.seq !== state.seq || (err && err.name === 'AbortError')) return;
      $('list-table').removeAttribute('aria-busy');
      setStatus(box, 'error', NETWORK_ERROR, loadList);
    });
  }

  function listRow(tx) {
    return el('tr', {},
      el('td', { 'data-label': 'Created' }, timeNode(tx.createdAt)),
      el('td', { 'data-label': 'Type' }, tx.type),
      el('td', { 'data-label': 'Status' }, badge(tx.status)),
      el('td', { 'data-label': 'Amount', class: 'num' }, money(tx)),
      el('td', { 'data-label': 'Order ID', class: 'wrap' },
        el('a', { href: '#tx=' + encodeURIComponent(tx.id), title: 'Open transaction ' + tx.id }, tx.orderId)));
  }

  function renderList() {
    var page = state.page;
    var target = $('list-table');
    target.replaceChildren();
    if (!page) return;
    if (page.items.length === 0) {
      var filtered = Object.keys(state.filters).some(function (k) { return k !== 'limit' && state.filters[k]; });
      append(target, el('p', { class: 'empty' }, filtered
        ? 'No transactions match these filters. Change or clear the filters.'
        : 'No transactions yet. Create one with POST /api/createDeposit or /api/createWithdraw, then refresh.'));
    } else {
      append(target, el('div', { class: 'table-wrap' }, el('table', { class: 'transactions' },
        el('caption', {}, 'Transactions, newest first. Open one by its order ID.'),
        el('thead', {}, el('tr', {}, ['Created', 'Type', 'Status', 'Amount', 'Order ID'].map(function (h) {
          return el('th', { scope: 'col', class: h === 'Amount' ? 'num' : null }, h);
        }))),
        el('tbody', {}, page.items.map(listRow)))));
    }
    $('prev').disabled = state.index === 0;
    $('next').disabled = !page.nextCursor;
    $('page-no').textContent = 'Page ' + (state.index + 1);
  }

  // ---- Detail ---------------------------------------------------------------------------------

  function field(label, value) {
    var empty = value === null || value === undefined || value === '';
    return [el('dt', {}, label), el('dd', { class: 'wrap' }, empty ? el('span', { class: 'muted' }, 'none') : value)];
  }

  function metadataTable(meta) {
    // Key order carries no meaning (the API compares metadata regardless of it): show keys sorted.
    var keys = Object.keys(meta || {}).sort();
    if (keys.length === 0) return el('p', { class: 'muted' }, 'No metadata.');
    return el('table', { class: 'metadata' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Key'), el('th', { scope: 'col' }, 'Value'))),
      el('tbody', {}, keys.map(function (k) {
        return el('tr', {}, el('td', { 'data-label': 'Key', class: 'wrap' }, k), el('td', { 'data-label': 'Value', class: 'wrap' }, meta[k]));
      })));
  }

  function attemptRow(a) {
    var result = a.statusCode !== null && a.statusCode !== undefined
      ? 'HTTP ' + a.statusCode
      : el('span', { class: 'error-text' }, a.error || 'no reply');
    return el('tr', {},
      el('td', { 'data-label': 'Attempt' }, String(a.attempt)),
      el('td', { 'data-label': 'Time' }, timeNode(a.at)),
      el('td', { 'data-label': 'Result' }, result),
      el('td', { 'data-label': 'Duration', class: 'num' }, a.durationMs + ' ms'));
  }

  function eventItem(e) {
    var attempts = e.delivery.attempts.length === 0
      ? el('p', { class: 'muted' }, e.delivery.status === 'skipped' ? 'Not sent: no callback URL was set.' : 'No delivery attempts yet.')
      : el('table', { class: 'attempts' },
        el('caption', {}, 'Delivery attempts'),
        el('thead', {}, el('tr', {}, ['Attempt', 'Time', 'Result', 'Duration'].map(function (h) {
          return el('th', { scope: 'col', class: h === 'Duration' ? 'num' : null }, h);
        }))),
        el('tbody', {}, e.delivery.attempts.map(attemptRow)));
    return el('li', { class: 'event' },
      el('h3', {}, e.type),
      el('p', {}, timeNode(e.createdAt)),
      el('p', {}, 'Callback ', badge(e.delivery.status)),
      el('p', { class: 'muted' }, 'Event ', el('code', {}, e.id)),
      attempts);
  }

  function renderDetail(detail) {
    var tx = detail.transaction;
    $('detail-title').textContent = 'Transaction ' + tx.orderId;
    $('detail-body').replaceChildren(
      el('dl', { class: 'fields' },
        field('ID', el('code', {}, tx.id)),
        field('Type', tx.type),
        field('Status', badge(tx.status)),
        field('Amount', money(tx)),
        field('Order ID', tx.orderId),
        field('Description', tx.description),
        field('Destination', tx.destination),
        field('Created', timeNode(tx.createdAt)),
        field('Updated', timeNode(tx.updatedAt)),
        field('Trace ID', detail.traceId
          ? [el('code', {}, detail.traceId), el('span', { class: 'muted hint' }, 'Give this to support: it finds the request in Jaeger.')]
          : null)),
      el('h2', {}, 'Metadata'),
      metadataTable(tx.metadata),
      el('h2', {}, 'Events and callbacks'),
      detail.events.length === 0
        ? el('p', { class: 'muted' }, 'No events yet.')
        : el('ol', { class: 'timeline' }, detail.events.map(eventItem)));
  }

  // While money or a callback is still moving, the open transaction refreshes itself, so a
  // merchant can watch pending → completed and each delivery attempt without pressing Refresh.
  var POLL_MS = 3000;
  var MOVING_DELIVERY = ['pending', 'retrying'];

  function stillMoving(detail) {
    var tx = detail.transaction;
    return (tx.status !== 'completed' && tx.status !== 'failed') ||
      detail.events.some(function (e) { return MOVING_DELIVERY.indexOf(e.delivery.status) >= 0; });
  }

  function stopPolling() {
    if (state.poll) clearTimeout(state.poll);
    state.poll = null;
    $('detail-live').hidden = true;
  }

  function schedulePoll(id, detail) {
    stopPolling();
    if (!stillMoving(detail)) return;
    $('detail-live').hidden = false;
    state.poll = setTimeout(function () {
      state.poll = null;
      if (state.detailId === id && !document.hidden) loadDetail(id, true);
      else if (state.detailId === id) schedulePoll(id, detail); // hidden tab: look again later
    }, POLL_MS);
  }

  /** Loads one transaction; `quiet` (Refresh, polling) keeps what is shown until the answer arrives. */
  function loadDetail(id, quiet) {
    var req = startRequest();
    var box = $('detail-status');
    state.detailId = id;
    if (!quiet) {
      stopPolling();
      $('detail-title').textContent = 'Transaction';
      $('detail-body').replaceChildren();
      setStatus(box, 'loading', 'Loading the transaction…');
    }
    var retry = function () { loadDetail(id); };
    api({ id: id }, req.signal).then(function (res) {
      if (req.seq !== state.seq) return;
      if (res.status === 401) return signOut(BAD_TOKEN);
      if (res.status !== 200) {
        stopPolling();
        return setStatus(box, 'error', problemMessage(res, 'transaction'), res.status === 404 || res.status === 400 ? null : retry);
      }
      setStatus(box, '', '');
      renderDetail(res.body);
      schedulePoll(id, res.body);
      if (!quiet) $('detail-title').focus();
    }, function (err) {
      if (req.seq !== state.seq || (err && err.name === 'AbortError')) return;
      stopPolling();
      setStatus(box, 'error', NETWORK_ERROR, retry);
    });
  }

  // ---- Views and routing (#tx=<id> opens one transaction) --------------------------------------

  function show(section) {
    ['signin', 'list-view', 'detail-view'].forEach(function (id) { $(id).hidden = id !== section; });
    $('sign-out').hidden = section === 'signin';
  }

  function showSignin(message) {
    show('signin');
    var box = $('signin-error');
    box.textContent = message || '';
    box.hidden = !message;
    $('token').focus();
  }

  function route() {
    stopPolling();
    state.detailId = null;
    if (!token()) return showSignin();
    var match = /^#tx=(.+)$/.exec(location.hash);
    if (match) {
      show('detail-view');
      return loadDetail(decodeURIComponent(match[1]));
    }
    show('list-view');
    if (state.page) renderList();
    else loadList();
  }

  /** "(2 active)" beside the Filters summary, so a collapsed panel still says the list is filtered. */
  function showFilterCount() {
    var n = ['type', 'status', 'orderId', 'from', 'to'].filter(function (k) { return state.filters[k]; }).length;
    $('filter-count').textContent = n ? '(' + n + ' active)' : '';
  }

  function applyFilters() {
    state.filters = readFilters();
    showFilterCount();
    state.cursors = [null];
    state.index = 0;
    loadList();
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('token-form').addEventListener('submit', function (event) {
      event.preventDefault();
      var value = $('token').value.trim();
      if (!value) return;
      try { sessionStorage.setItem(TOKEN_KEY, value); } catch (e) { /* storage disabled */ }
      $('token').value = '';
      state.filters = readFilters();
      state.page = null;
      route();
    });
    $('sign-out').addEventListener('click', function () {
      signOut();
      if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    });
    $('filters').addEventListener('submit', function (event) {
      event.preventDefault();
      applyFilters();
    });
    $('filters').addEventListener('reset', function () {
      setTimeout(applyFilters, 0); // after the browser has cleared the fields
    });
    $('refresh').addEventListener('click', loadList);
    $('detail-refresh').addEventListener('click', function () {
      if (state.detailId) loadDetail(state.detailId, true);
    });
    $('next').addEventListener('click', function () {
      if (!state.page || !state.page.nextCursor) return;
      state.cursors[state.index + 1] = state.page.nextCursor;
      state.index += 1;
      loadList();
    });
    $('prev').addEventListener('click', function () {
      if (state.index === 0) return;
      state.index -= 1;
      loadList();
    });
    // Back link (#list), browser back and forward all change the hash; one listener routes them.
    window.addEventListener('hashchange', route);
    // On a phone the filters start folded, so the transactions are on the first screen.
    if (window.matchMedia && window.matchMedia('(max-width: 40rem)').matches) $('filter-panel').open = false;
    state.filters = readFilters();
    route();
  });
})();
