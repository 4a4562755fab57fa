// The interactive page's own script, beside htmx (/ui/assets/htmx.min.js), which fetches every view
// and the CSV files and swaps in the fragments the ui rendered, as the hx-* attributes of the page
// (app-page.ts) and of the fragments say. This file does only what htmx does not:
// - the API token: kept in this tab's sessionStorage, added as the serviceApiToken header to every
//   htmx request (htmx:configRequest), never put in a URL, a cookie or the console; a 401 forgets it;
// - errors: every error is problem+json (the gateway's and the ui's alike); it goes to the view's status box;
// - what an action's answer means (Redeliver, Recover, a CSV file to save);
// - which view shows (#tx=<id>, #statement=<currency>).
// It inserts only fragments the ui rendered and never builds markup from strings.
'use strict';

(function () {
  var TOKEN_KEY = 'dw.serviceApiToken';
  // API tokens are visible ASCII. Anything else cannot be a header value (the request would fail as
  // if the server were unreachable) and cannot be a token: it is refused at once.
  var TOKEN_FORMAT = /^[\x21-\x7e]+$/;
  var BAD_TOKEN = 'The token is wrong (or was rotated). Paste a current API token.';
  var NETWORK_ERROR = 'Could not reach the server. Check your connection, then retry.';
  var INVALID_LINK = 'This link is invalid: it does not name a transaction. Open one from the list.';
  // A transaction id as the API writes it (8-4-4-4-12 hex): anything else in a #tx= link is a broken link.
  var TRANSACTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  var LOCAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/;
  var $ = function (id) { return document.getElementById(id); };
  var detailId = null;

  // htmx notes the page's path in sessionStorage for its history feature, which this page leaves off:
  // removed, so that this tab's storage holds the token alone.
  try { sessionStorage.removeItem('htmx-current-path-for-history'); } catch (e) { /* storage disabled */ }

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }

  /** A datetime-local value (the browser's local time, no zone) as an ISO instant; other values as they are. */
  function instant(value) {
    if (!LOCAL_TIME.test(value)) return value;
    var d = new Date(value);
    return isNaN(d.getTime()) ? value : d.toISOString();
  }

  // The merchant API takes JSON bodies: buttons with hx-ext="json" (Redeliver, Recover) send their values as one object.
  htmx.defineExtension('json', {
    onEvent: function (name, event) {
      if (name === 'htmx:configRequest') Object.assign(event.detail.headers, { 'Content-Type': 'application/json', Accept: 'application/json' });
    },
    encodeParameters: function (xhr, parameters) {
      xhr.overrideMimeType('text/json');
      return JSON.stringify(Object.fromEntries(parameters));
    },
  });

  // A CSV button saves what its view shows: the filters last applied, not fields typed since and not
  // applied yet (kept per form, as sent; the page's cursor is no filter).
  var applied = {};

  // Every htmx request: the token header (Accept and x-ui-fragment are the page's hx-headers), instants
  // for local times, no empty fields.
  document.addEventListener('htmx:configRequest', function (event) {
    var d = event.detail;
    d.headers.serviceApiToken = token() || '';
    Array.from(d.formData.entries()).forEach(function (entry) {
      if (entry[1] === '') d.formData.delete(entry[0]);
      else d.formData.set(entry[0], instant(entry[1]));
    });
    if (d.elt.tagName === 'FORM' && d.elt.id) {
      applied[d.elt.id] = Array.from(d.formData.entries()).filter(function (entry) { return entry[0] !== 'cursor'; });
    }
    var include = d.elt.getAttribute('data-action') === 'download' && d.elt.getAttribute('hx-include');
    var sent = include && applied[include.slice(1)];
    if (sent) {
      Array.from(d.formData.keys()).forEach(function (name) { d.formData.delete(name); });
      sent.forEach(function (entry) { if (entry[0] !== 'limit') d.formData.append(entry[0], entry[1]); });
    }
  });

  // ---- Status boxes: loading, errors, Retry ------------------------------------------------------

  /** Where a request's outcome is said: an action's own line, or the status box its view names. */
  function statusBox(elt) {
    var action = elt.closest('.event-actions, [data-recover]');
    if (action) return action.querySelector('.action-status');
    var host = elt.closest('[data-status-box]');
    return host && $(host.getAttribute('data-status-box'));
  }

  /** Says `content` (text or a node) in `box`, with the page's Retry button calling `retry`; no content clears it. */
  function setStatus(box, kind, content, retry) {
    if (!box) return;
    box.classList.remove('error', 'loading');
    if (kind) box.classList.add(kind);
    box.replaceChildren();
    if (content) box.append(content);
    if (!retry) return;
    var button = $('retry').content.firstElementChild.cloneNode(true);
    button.addEventListener('click', retry);
    box.append(button);
  }

  /**
   * A problem+json body as one sentence: its detail, then each offending field and why that the
   * detail does not already spell out, so a 400 says which field to fix. Paths arrive as
   * "querystring:/orderId" or "/since": the field's name is what the merchant knows.
   */
  function problemText(problem) {
    if (!problem || typeof problem !== 'object') return null;
    var detail = typeof problem.detail === 'string' ? problem.detail : '';
    // Each field's message once: not where the detail says it already, and without a path that only
    // names where in the request it was (`querystring`), which means nothing to a person.
    var fields = (Array.isArray(problem.errors) ? problem.errors : []).map(function (e) {
      var path = String(e.path || '').replace(/^\w*:/, '').replace(/^\//, '');
      var message = String(e.message).replace(/\.$/, '');
      if (detail.toLowerCase().indexOf(message.toLowerCase()) !== -1) return '';
      return (/^(querystring|body|params|headers?)?$/.test(path) ? '' : path + ': ') + message;
    });
    return [detail].concat(fields).filter(Boolean).join(' ') || null;
  }

  /** A failed answer as a sentence from its problem+json, with the request ID to quote to support. */
  function failure(xhr) {
    if (xhr.status === 429) return 'Too many requests. Wait ' + (xhr.getResponseHeader('Retry-After') || 'a few') + ' seconds, then retry.';
    if (xhr.status === 503) return 'The service is unavailable right now. Retry in a moment.';
    var problem = null;
    try { problem = JSON.parse(xhr.responseText); } catch (e) { /* not JSON */ }
    var requestId = xhr.getResponseHeader('x-request-id');
    return (problemText(problem) || 'Something went wrong') + ' (HTTP ' + xhr.status + (requestId ? ', request ID ' + requestId : '') + ')';
  }

  /** The same request once more (the Retry button). */
  function again(d) {
    return function () {
      htmx.ajax(d.requestConfig.verb, d.pathInfo.requestPath, { source: d.elt, target: d.target }).catch(function () {});
    };
  }

  // A view's loading text shows while it holds nothing yet; an action's (a CSV file) every time.
  document.addEventListener('htmx:beforeRequest', function (event) {
    var d = event.detail;
    // Recover is no <form> (Enter must not navigate), so the browser checks its time only when asked:
    // an empty one is said next to the field, and nothing is sent.
    var since = d.elt.getAttribute('data-action') === 'recover' && document.getElementById('recover-since');
    if (since && !since.reportValidity()) return event.preventDefault();
    d.target.setAttribute('aria-busy', 'true');
    var loading = d.elt.closest('[data-loading]');
    if (loading && (loading === d.target || !d.target.hasChildNodes())) setStatus(statusBox(d.elt), 'loading', loading.getAttribute('data-loading'));
  });
  document.addEventListener('htmx:afterRequest', function (event) {
    event.detail.target.removeAttribute('aria-busy');
  });
  document.addEventListener('htmx:sendError', function (event) {
    setStatus(statusBox(event.detail.elt), 'error', NETWORK_ERROR, again(event.detail));
  });

  // The refresh of a transaction still moving (every 3 s) replaces its events: the earlier attempts
  // someone opened stay open.
  var keepOpen = [];

  document.addEventListener('htmx:beforeSwap', function (event) {
    var d = event.detail;
    var xhr = d.xhr;
    var action = ACTIONS[d.elt.getAttribute('data-action')];
    // Signed out meanwhile, or an answer for a transaction no longer shown: dropped.
    var stale = !token() || (d.target.id === 'detail-body' && new URLSearchParams(d.pathInfo.requestPath.split('?')[1]).get('id') !== detailId);
    if (stale || action || xhr.status >= 400) d.shouldSwap = false;
    if (stale) return;
    if (xhr.status === 401) {
      // As Sign out does: nothing of this merchant stays, the address (#tx=…) included.
      if (location.hash) history.replaceState(null, '', location.pathname + location.search);
      return signOut(BAD_TOKEN);
    }
    if (action) return action(xhr, statusBox(d.elt), d);
    // A refused filter or page: the rows of the one before would read as its answer, so they go
    // (and with them what was announced of them).
    if (xhr.status === 400 && (d.target.id === 'list-table' || d.target.id === 'statement-table')) d.target.replaceChildren();
    if (xhr.status >= 400 && d.target.id === 'list-table') $('list-announce').textContent = '';
    if (xhr.status >= 400) return setStatus(statusBox(d.elt), 'error', failure(xhr), xhr.status === 400 || xhr.status === 404 ? null : again(d));
    setStatus(statusBox(d.elt));
    if (d.target.id !== 'detail-body') return;
    keepOpen = Array.prototype.map.call(document.querySelectorAll('#detail-body details.earlier-attempts[open]'), function (el) {
      return el.getAttribute('data-event');
    });
  });
  document.addEventListener('htmx:afterSwap', function () {
    document.querySelectorAll('#detail-body details.earlier-attempts').forEach(function (el) {
      if (keepOpen.indexOf(el.getAttribute('data-event')) >= 0) el.open = true;
    });
    keepOpen = [];
  });
  // After htmx has settled the new content (it gives the focus back to an element of the same id,
  // the pager's button, which may now be disabled):
  document.addEventListener('htmx:afterSettle', function (event) {
    var target = event.detail.target;
    titleTab();
    if (target.id !== 'list-table' && target.id !== 'statement-table') return;
    // A page or a filter applied is said to a screen reader (the status box says only problems)...
    var shown = target.querySelectorAll('tbody tr').length;
    $(target.id === 'list-table' ? 'list-announce' : 'statement-announce').textContent = target.id === 'list-table'
      ? (shown === 0 ? 'No transactions match.' : shown + (shown === 1 ? ' transaction' : ' transactions') + ' shown.')
      : (shown === 0 ? 'No entries match.' : shown + (shown === 1 ? ' entry' : ' entries') + ' shown.');
    // ...the statement's address names the currency shown (a link copied from it shows the same)...
    if (target.id === 'statement-table' && !$('statement-view').hidden) {
      var currency = $('s-currency').value;
      var hash = 'statement' + (currency ? '=' + encodeURIComponent(currency) : '');
      if (location.hash !== '#' + hash) history.replaceState(null, '', '#' + hash);
      // ...and its heading (and the tab) the currency.
      $('statement-title').textContent = currency ? 'Statement · ' + currency : 'Statement';
      titleTab();
    }
    // ...and a page turned leaves the focus on the new page, not on the body (the pager it was on is gone).
    var source = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (source && source.closest && source.closest('.pager')) target.focus();
    if (returnTo) {
      var row = target.querySelector('a[data-tx="' + returnTo + '"]');
      returnTo = null;
      if (row) row.focus();
    }
  });

  // ---- Actions on server-rendered buttons (data-action): what their answer means -----------------

  var ACTIONS = {
    // A new series of attempts for one event: the refreshed detail follows it until it settles.
    // 409: a series started meanwhile (another tab, a recovery): the refresh shows it as it is now.
    // The button goes with the reload (a series in progress offers none): the focus moves to its
    // event, and what happened is said in the transaction's status box, which the reload keeps.
    redeliver: function (xhr, box, d) {
      var said = xhr.status === 202 ? 'Redelivery started.' : failure(xhr);
      var kind = xhr.status === 202 ? '' : 'error';
      if (!((xhr.status === 202 || xhr.status === 409) && detailId)) return setStatus(box, kind, said);
      var eventId = d.elt.closest('li.event').getAttribute('data-event');
      loadDetail(detailId, true, function () {
        var item = document.querySelector('#detail-body li.event[data-event="' + eventId + '"]');
        if (item) item.focus();
        setStatus($('detail-status'), kind, said);
      });
    },
    // Every failed or skipped callback since the chosen time: the views reload, and the message goes
    // into the refreshed health view's panel.
    recover: function (xhr, box) {
      if (xhr.status !== 202) return setStatus(box, 'error', failure(xhr));
      var n = JSON.parse(xhr.responseText).recovered;
      var done = n === 0
        ? 'Nothing to recover: no failed or skipped callbacks since then (or they are being sent already).'
        : 'Sending ' + n + (n === 1 ? ' callback' : ' callbacks') + ' again.';
      document.addEventListener('htmx:afterSwap', function said(event) {
        if (event.detail.target.id !== 'health-body') return;
        document.removeEventListener('htmx:afterSwap', said);
        setStatus(document.querySelector('#health-body [data-recover] .action-status'), '', done);
        // The button it was pressed on is gone with the reload: the focus goes to the new one.
        var again = document.querySelector('#health-body [data-action="recover"]');
        if (again) again.focus();
      });
      htmx.trigger(document.body, 'dw:moved');
    },
    // Download CSV, Download statement CSV: every row matching the form's filters, fetched by htmx
    // with the token header (a plain link could not carry it), handed to the browser as a file.
    download: function (xhr, box, d) {
      // A refusal (400: too many rows for one file, a filter refused) is not retried as it is.
      if (xhr.status !== 200) return setStatus(box, 'error', failure(xhr), xhr.status === 400 || xhr.status === 404 ? null : again(d));
      var link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([xhr.responseText], { type: 'text/csv' }));
      link.download = d.elt.getAttribute('data-file');
      link.click();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 0);
      setStatus(box);
    },
  };

  // ---- Views: sign-in, the list, one transaction (#tx=<id>), the statement (#statement=<currency>) --

  /** The transaction last opened: back on the list, the focus returns to its link. */
  var returnTo = null;

  function show(section) {
    document.querySelectorAll('#main > section').forEach(function (el) { el.hidden = el.id !== section; });
    $('sign-out').hidden = section === 'signin';
    titleTab();
  }

  /** The tab's title names what the page shows: the view's heading (a transaction's order ID, say), then the site. */
  var SITE_TITLE = document.title;
  function titleTab() {
    var view = document.querySelector('#main > section:not([hidden])');
    var heading = view && view.id !== 'list-view' && view.id !== 'signin' && view.querySelector('h1');
    var name = heading ? heading.textContent.replace(/[\u2066-\u2069]/g, '').trim() : '';
    document.title = name ? name + ' · ' + SITE_TITLE.replace(/^[^·]*· /, '') : SITE_TITLE;
  }

  function signOut(message) {
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage disabled: nothing kept */ }
    detailId = null;
    // Every view's content and status box, so no merchant data stays on the page.
    document.querySelectorAll('div[data-status-box], .status').forEach(function (el) { setStatus(el); });
    // The fields (filters, the statement's currency) and the open transaction's title too: whoever
    // signs in next on this tab starts from the defaults and sees nothing of this merchant. Set
    // back one by one: a form's reset() would fire its reset event, on which htmx reloads a view.
    document.querySelectorAll('#main input, #main select').forEach(function (field) {
      if (field.tagName === 'SELECT') Array.prototype.forEach.call(field.options, function (o) { o.selected = o.defaultSelected; });
      else if (field.type === 'checkbox' || field.type === 'radio') field.checked = field.defaultChecked;
      else field.value = field.defaultValue;
    });
    $('detail-title').textContent = 'Transaction';
    $('statement-title').textContent = 'Statement';
    $('list-announce').textContent = '';
    $('statement-announce').textContent = '';
    $('filter-count').textContent = '';
    $('token').value = '';
    show('signin');
    $('signin-error').textContent = message || '';
    $('signin-error').hidden = !message;
    $('token').focus();
  }

  /** Loads one transaction; `quiet` (Refresh, after a redelivery) keeps the focus where it is; `after` runs once it is shown. */
  function loadDetail(id, quiet, after) {
    detailId = id;
    htmx.ajax('GET', '/ui/viewTransaction?id=' + encodeURIComponent(id), { source: '#detail-body', target: '#detail-body' })
      .then(function () {
        if (detailId !== id) return;
        if (!quiet) $('detail-title').focus();
        if (after) after();
      }, function () {});
  }

  /** The text after #tx= or #statement=; null when its escapes are broken (decodeURIComponent throws). */
  function decoded(text) {
    try { return decodeURIComponent(text); } catch (e) { return null; }
  }

  // A view loads when first shown (or after a failure left it empty), the statement also when the
  // address names another currency.
  function route() {
    // Leaving a transaction drops it, and with it the notice that would fetch it again.
    var left = detailId;
    detailId = null;
    $('detail-title').textContent = 'Transaction';
    $('detail-body').replaceChildren();
    if (!token()) return signOut();
    var tx = /^#tx=(.*)$/.exec(location.hash);
    var statement = /^#statement(?:=(.*))?$/.exec(location.hash);
    show(tx ? 'detail-view' : statement ? 'statement-view' : 'list-view');
    if (tx) {
      var id = decoded(tx[1]);
      return id !== null && TRANSACTION_ID.test(id) ? loadDetail(id) : setStatus($('detail-status'), 'error', INVALID_LINK);
    }
    if (statement) {
      // As the field reads what is typed: no spaces around it, in capitals (#statement=usd is USD).
      var currency = (decoded(statement[1] || '') || '').trim().toUpperCase();
      $('statement-title').focus();
      if (currency === $('s-currency').value && $('statement-table').hasChildNodes()) return;
      $('s-currency').value = currency;
      return htmx.trigger(document.body, 'dw:statement');
    }
    if (!$('list-table').hasChildNodes()) {
      returnTo = left;
      return htmx.trigger(document.body, 'dw:load');
    }
    var opened = left && $('list-table').querySelector('a[data-tx="' + left + '"]');
    (opened || $('list-title')).focus();
  }

  // Skip to the transactions (or, on one transaction, to it) without changing the address's hash.
  $('skip').addEventListener('click', function (event) {
    event.preventDefault();
    var target = !$('detail-view').hidden ? $('detail-title') : !$('statement-view').hidden ? $('statement-table') : $('list-table');
    target.focus();
  });

  // Fragments' actions (Redeliver, Recover) need this script: the stylesheet shows them only now.
  document.documentElement.classList.add('scripted');

  // The page is parsed (this script is deferred); route() waits for htmx to have read its attributes.
  $('token-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var value = $('token').value.trim();
    if (!value) return;
    if (!TOKEN_FORMAT.test(value)) return signOut(BAD_TOKEN);
    try { sessionStorage.setItem(TOKEN_KEY, value); } catch (e) { /* storage disabled */ }
    $('token').value = '';
    $('signin-error').hidden = true;
    route();
    // The form is gone: the focus goes to what replaced it, not to the page's body.
    if (!$('list-view').hidden) $('list-title').focus();
  });
  $('sign-out').addEventListener('click', function () {
    signOut();
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  });
  $('detail-refresh').addEventListener('click', function () {
    if (detailId) loadDetail(detailId, true);
  });
  // Links of the fragments open a transaction or the statement here instead of the no-script page,
  // which a browser cannot open (it needs the token's header): each gets /ui's own address, so one
  // opened in a new tab (middle click, Ctrl or Cmd-click, the context menu) asks for the token there
  // and then opens it. A plain click only changes the hash: route() opens it in this tab.
  function hashOf(link) {
    var tx = link.getAttribute('data-tx');
    var currency = link.getAttribute('data-statement');
    return tx ? 'tx=' + encodeURIComponent(tx) : 'statement' + (currency ? '=' + encodeURIComponent(currency) : '');
  }
  function appLinks(root) {
    var links = root.querySelectorAll ? root.querySelectorAll('a[data-tx], a[data-statement]') : [];
    for (var i = 0; i < links.length; i++) links[i].setAttribute('href', '/ui#' + hashOf(links[i]));
  }
  appLinks(document);
  document.addEventListener('htmx:load', function (event) { appLinks(event.detail.elt); });
  $('main').addEventListener('click', function (event) {
    var link = event.target.closest && event.target.closest('a[data-tx], a[data-statement]');
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    location.hash = hashOf(link);
  });
  // What a merchant types as it reads: an order ID without the spaces around it (an order ID never
  // starts or ends with one in practice, and a pasted one often does), a currency code in capitals.
  $('f-order').addEventListener('change', function (event) { event.target.value = event.target.value.trim(); });
  $('s-currency').addEventListener('change', function (event) { event.target.value = event.target.value.trim().toUpperCase(); });
  // On a phone the filters start folded, so the transactions are on the first screen.
  if (window.matchMedia && window.matchMedia('(max-width: 40rem)').matches) $('filter-panel').open = false;
  // Back links (#list), browser back and forward all change the hash; one listener routes them.
  window.addEventListener('hashchange', route);
  document.addEventListener('DOMContentLoaded', route);
})();
