// The interactive transactions page. Plain JavaScript, no framework, no build step.
// It renders nothing itself: every view (list, one transaction, endpoint health, errors) is HTML
// rendered by the ui service's templates, the same ones as the no-script pages, fetched as a
// fragment (header x-ui-fragment: 1) and swapped in. Safety rules this file keeps:
// - the API token lives only in this tab's sessionStorage and travels only in the serviceApiToken
//   header; never in a URL, a cookie or the console;
// - the only markup it inserts is a fragment answered by the ui's own templates, which escape
//   every value; it never builds markup from strings.
'use strict';

(function () {
  var TOKEN_KEY = 'dw.serviceApiToken';
  // API tokens are visible ASCII. Anything else cannot be a header value (fetch throws a TypeError,
  // which looked like "Could not reach the server") and cannot be a token: it is refused at once.
  var TOKEN_FORMAT = /^[\x21-\x7e]+$/;

  var $ = function (id) {
    return document.getElementById(id);
  };

  // ---- Token ----------------------------------------------------------------------------------

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }

  function signOut(message) {
    stopPolling();
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage disabled: nothing kept */ }
    state.listLoaded = false;
    state.nextCursor = null;
    state.cursors = [null];
    state.index = 0;
    $('token').value = '';
    $('list-table').replaceChildren();
    $('detail-body').replaceChildren();
    $('health-body').replaceChildren();
    showSignin(message);
  }

  // ---- Fetching fragments ---------------------------------------------------------------------

  var parser = new DOMParser();

  /**
   * GET a ui view as a fragment. Resolves {status, fragment, message, retryAfter}: `fragment` is
   * the server-rendered element (data-fragment="…"), `message` the text of a problem+json answer
   * (the gateway's 401/429/503 are JSON). Rejects on a network failure.
   */
  function view(path, params, signal) {
    var query = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) {
      if (params[k] !== undefined && params[k] !== null && params[k] !== '') query.set(k, params[k]);
    });
    var search = query.toString();
    return fetch(path + (search ? '?' + search : ''), {
      headers: { Accept: 'text/html', 'x-ui-fragment': '1', serviceApiToken: token() || '' },
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
      signal: signal,
    }).then(function (res) {
      var type = res.headers.get('Content-Type') || '';
      return res.text().then(function (text) {
        var out = { status: res.status, fragment: null, message: null, retryAfter: res.headers.get('Retry-After') };
        if (type.indexOf('text/html') === 0) {
          out.fragment = document.adoptNode(parser.parseFromString(text, 'text/html').body.firstElementChild || document.createElement('div'));
        } else {
          try { out.message = problemText(JSON.parse(text)); } catch (e) { /* not JSON */ }
        }
        return out;
      });
    });
  }

  var NETWORK_ERROR = 'Could not reach the server. Check your connection, then retry.';
  var BAD_TOKEN = 'The token is wrong (or was rotated). Paste a current API token.';
  var INVALID_LINK = 'This link is invalid: it does not name a transaction. Open one from the list.';

  /**
   * A problem+json body as one sentence: its detail, then each offending field and why
   * ("orderId: must be …") that the detail does not already spell out (a validation detail names
   * up to three: "Fix the query parameter orderId: must be …"), so a 400 says which field to fix.
   * Paths arrive as "querystring:/orderId" or "/since": the field's name is what the merchant knows.
   */
  function problemText(problem) {
    if (!problem || typeof problem !== 'object') return null;
    var detail = typeof problem.detail === 'string' ? problem.detail : '';
    var fields = (Array.isArray(problem.errors) ? problem.errors : []).map(function (e) {
      return String(e.path || '').replace(/^\w*:/, '').replace(/^\//, '') + ': ' + String(e.message).replace(/\.$/, '');
    }).filter(function (field) {
      return detail.indexOf(field) === -1;
    });
    return [detail].concat(fields).filter(Boolean).join(' ') || null;
  }

  function failureMessage(res) {
    if (res.status === 429) return 'Too many requests. Wait ' + (res.retryAfter || 'a few') + ' seconds, then retry.';
    if (res.status === 503) return 'The service is unavailable right now. Retry in a moment.';
    return (res.message || 'Something went wrong') + ' (HTTP ' + res.status + ')';
  }

  // ---- Status area ----------------------------------------------------------------------------

  /** Shows a loading text, an error (a server error fragment or a text), or nothing. */
  function setStatus(box, kind, content, retry) {
    box.replaceChildren();
    box.className = 'status' + (kind ? ' ' + kind : '');
    if (!content) return;
    if (typeof content === 'string') {
      var p = document.createElement('p');
      p.textContent = content;
      box.appendChild(p);
    } else {
      box.appendChild(content);
    }
    if (retry) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary';
      button.textContent = 'Retry';
      button.addEventListener('click', retry);
      box.appendChild(button);
    }
  }

  /** A non-200 answer: 401 signs out, an HTML error fragment is shown as is, else a message. */
  function showFailure(box, res, retry) {
    if (res.status === 401) return signOut(BAD_TOKEN);
    var final = res.status === 400 || res.status === 404;
    setStatus(box, 'error', res.fragment || failureMessage(res), final ? null : retry);
  }

  // ---- Requests -------------------------------------------------------------------------------

  var state = { filters: {}, cursors: [null], index: 0, nextCursor: null, listLoaded: false, seq: 0, controller: null, detailId: null, poll: null };

  /** One main-view request at a time: a newer request aborts the older one, late answers are dropped. */
  function startRequest() {
    if (state.controller) state.controller.abort();
    state.controller = typeof AbortController === 'function' ? new AbortController() : null;
    state.seq += 1;
    return { seq: state.seq, signal: state.controller ? state.controller.signal : undefined };
  }

  // ---- Endpoint health ------------------------------------------------------------------------

  /** `then` runs once the fresh view is in place (a recovery writes its outcome into it). */
  function loadHealth(then) {
    var box = $('health-status');
    view('/ui/endpointHealth').then(function (res) {
      if (res.status === 401) return signOut(BAD_TOKEN);
      if (res.status !== 200) return setStatus(box, 'error', res.fragment || failureMessage(res), loadHealth);
      setStatus(box, '', '');
      $('health-body').replaceChildren(res.fragment);
      if (typeof then === 'function') then();
    }, function () {
      setStatus(box, 'error', NETWORK_ERROR, loadHealth);
    });
  }

  // ---- List -----------------------------------------------------------------------------------

  /** A datetime-local value (no zone: the user's local time) as an ISO instant; undefined when empty. */
  function localToIso(value) {
    if (!value) return undefined;
    var d = new Date(value);
    return isNaN(d.getTime()) ? undefined : d.toISOString();
  }

  function readFilters() {
    var form = $('filters');
    var toIso = localToIso;
    return {
      type: form.elements.type.value || undefined,
      status: form.elements.status.value || undefined,
      orderId: form.elements.orderId.value || undefined,
      from: toIso(form.elements.from.value),
      to: toIso(form.elements.to.value),
      limit: form.elements.limit.value,
    };
  }

  function loadList() {
    var req = startRequest();
    var params = Object.assign({}, state.filters, { cursor: state.cursors[state.index] });
    var box = $('list-status');
    var table = $('list-table');
    setStatus(box, 'loading', 'Loading transactions…');
    table.setAttribute('aria-busy', 'true');
    view('/ui/viewTransaction', params, req.signal).then(function (res) {
      if (req.seq !== state.seq) return;
      table.removeAttribute('aria-busy');
      if (res.status !== 200) return showFailure(box, res, loadList);
      setStatus(box, '', '');
      state.nextCursor = res.fragment.getAttribute('data-next-cursor') || null;
      state.listLoaded = true;
      table.replaceChildren(res.fragment);
      showPager();
    }, function (err) {
      if (req.seq !== state.seq || (err && err.name === 'AbortError')) return;
      table.removeAttribute('aria-busy');
      setStatus(box, 'error', NETWORK_ERROR, loadList);
    });
  }

  function showPager() {
    $('prev').disabled = state.index === 0;
    $('next').disabled = !state.nextCursor;
    $('page-no').textContent = 'Page ' + (state.index + 1);
  }

  // ---- Detail ---------------------------------------------------------------------------------

  // While money or a callback is still moving (the server marks the fragment data-moving), the
  // open transaction refreshes itself, so a merchant can watch pending → completed and each
  // delivery attempt without pressing Refresh.
  var POLL_MS = 3000;

  function stopPolling() {
    if (state.poll) clearTimeout(state.poll);
    state.poll = null;
    $('detail-live').hidden = true;
  }

  function schedulePoll(id, moving) {
    stopPolling();
    if (!moving) return;
    $('detail-live').hidden = false;
    state.poll = setTimeout(function () {
      state.poll = null;
      if (state.detailId === id && !document.hidden) loadDetail(id, true);
      else if (state.detailId === id) schedulePoll(id, moving); // hidden tab: look again later
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
    view('/ui/viewTransaction', { id: id }, req.signal).then(function (res) {
      if (req.seq !== state.seq) return;
      if (res.status !== 200) {
        stopPolling();
        return showFailure(box, res, retry);
      }
      setStatus(box, '', '');
      $('detail-title').textContent = res.fragment.getAttribute('data-title') || 'Transaction';
      $('detail-body').replaceChildren(res.fragment);
      schedulePoll(id, res.fragment.getAttribute('data-moving') === 'true');
      if (!quiet) $('detail-title').focus();
    }, function (err) {
      if (req.seq !== state.seq || (err && err.name === 'AbortError')) return;
      stopPolling();
      setStatus(box, 'error', NETWORK_ERROR, retry);
    });
  }

  // ---- CSV export ------------------------------------------------------------------------------

  /**
   * Every transaction matching the applied filters (not one page) as the server's CSV. Fetched with
   * the token header like every view (a plain link could not carry it), then handed to the browser
   * as a download.
   */
  function downloadCsv() {
    var box = $('list-status');
    var query = new URLSearchParams();
    ['type', 'status', 'orderId', 'from', 'to'].forEach(function (k) { if (state.filters[k]) query.set(k, state.filters[k]); });
    setStatus(box, 'loading', 'Preparing the CSV…');
    fetch('/ui/viewTransaction?' + query.toString(), {
      headers: { Accept: 'text/csv', serviceApiToken: token() || '' },
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    }).then(function (res) {
      if (res.status === 401) return signOut(BAD_TOKEN);
      if (res.status !== 200) {
        return res.json().catch(function () { return null; }).then(function (p) {
          setStatus(box, 'error', failureMessage({ status: res.status, message: problemText(p), retryAfter: res.headers.get('Retry-After') }), downloadCsv);
        });
      }
      return res.blob().then(function (blob) {
        var link = document.createElement('a');
        link.href = URL.createObjectURL(blob);
        link.download = 'transactions.csv';
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(link.href); }, 0);
        setStatus(box, '', '');
      });
    }, function () {
      setStatus(box, 'error', NETWORK_ERROR, downloadCsv);
    });
  }

  // ---- Actions on server-rendered buttons -----------------------------------------------------

  /**
   * POST a merchant API call as JSON with the token header, like view() does for pages. Resolves
   * {status, json, retryAfter}; rejects on a network failure.
   */
  function post(path, body) {
    return fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', serviceApiToken: token() || '' },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    }).then(function (res) {
      return res.text().then(function (text) {
        var json = null;
        try { json = JSON.parse(text); } catch (e) { /* not JSON */ }
        return { status: res.status, json: json, retryAfter: res.headers.get('Retry-After') };
      });
    });
  }

  function problemMessage(res) {
    return failureMessage({ status: res.status, message: problemText(res.json), retryAfter: res.retryAfter });
  }

  function actionStatus(box, text, isError) {
    if (!box) return;
    box.textContent = text;
    box.className = 'action-status' + (isError ? ' error' : '');
  }

  /**
   * Buttons in fragments carry data-action="<name>" and their arguments as data-* attributes; a
   * click runs ACTIONS[name](button). Each calls the merchant API, then refreshes the view it sits in.
   */
  var ACTIONS = {
    // A new series of attempts for one event (POST /api/redeliverCallback); the refreshed detail
    // shows the delivery pending again and follows it (data-moving) until it settles.
    redeliver: function (button) {
      var box = button.parentNode.querySelector('.action-status');
      var id = state.detailId;
      button.disabled = true;
      actionStatus(box, 'Redelivering…');
      post('/api/redeliverCallback', { eventId: button.getAttribute('data-event-id') }).then(function (res) {
        if (res.status === 401) return signOut(BAD_TOKEN);
        if (res.status !== 202) {
          button.disabled = false;
          // 409: a series started meanwhile (another tab, a recovery): show it as it is now.
          if (res.status === 409 && id) loadDetail(id, true);
          return actionStatus(box, problemMessage(res), true);
        }
        actionStatus(box, 'Redelivery started.');
        if (id && state.detailId === id) loadDetail(id, true);
      }, function () {
        button.disabled = false;
        actionStatus(box, NETWORK_ERROR, true);
      });
    },
    // Every failed or skipped callback since the chosen time (POST /api/recoverCallbacks).
    recover: function (button) {
      var panel = button.closest('[data-recover]');
      var box = panel.querySelector('.action-status');
      var since = localToIso(panel.querySelector('[name=since]').value);
      if (!since) return actionStatus(box, 'Choose the date and time to recover from.', true);
      var body = { since: since };
      var type = panel.querySelector('[name=type]').value;
      if (type) body.type = type;
      button.disabled = true;
      actionStatus(box, 'Recovering…');
      post('/api/recoverCallbacks', body).then(function (res) {
        if (res.status === 401) return signOut(BAD_TOKEN);
        button.disabled = false;
        if (res.status !== 202) return actionStatus(box, problemMessage(res), true);
        var n = res.json.recovered;
        var done = n === 0
          ? 'Nothing to recover: no failed or skipped callbacks since then (or they are being sent already).'
          : 'Sending ' + n + (n === 1 ? ' callback' : ' callbacks') + ' again.';
        // The refreshed health view replaces this panel: the message goes into the new one.
        loadHealth(function () {
          actionStatus($('health-body').querySelector('[data-recover] .action-status'), done);
        });
        if (state.listLoaded) loadList();
      }, function () {
        button.disabled = false;
        actionStatus(box, NETWORK_ERROR, true);
      });
    },
  };

  function onAction(event) {
    var button = event.target.closest && event.target.closest('[data-action]');
    if (!button || !ACTIONS[button.getAttribute('data-action')]) return;
    event.preventDefault();
    ACTIONS[button.getAttribute('data-action')](button);
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

  /** The id of a #tx=<id> link; null when its escapes are broken (#tx=%E0%A4%A), which decodeURIComponent throws on. */
  function linkedId(encoded) {
    try { return decodeURIComponent(encoded); } catch (e) { return null; }
  }

  /** A broken link replaces whatever transaction or message was shown, and a late answer is dropped. */
  function showInvalidLink() {
    startRequest();
    $('detail-title').textContent = 'Transaction';
    $('detail-body').replaceChildren();
    setStatus($('detail-status'), 'error', INVALID_LINK);
  }

  function route() {
    stopPolling();
    state.detailId = null;
    if (!token()) return showSignin();
    var match = /^#tx=(.+)$/.exec(location.hash);
    if (match) {
      show('detail-view');
      var id = linkedId(match[1]);
      return id === null ? showInvalidLink() : loadDetail(id);
    }
    show('list-view');
    if (!state.listLoaded) {
      loadList();
      loadHealth();
    }
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

  // Fragments' actions (Redeliver, Recover) need this script: the stylesheet shows them only now.
  document.documentElement.classList.add('scripted');

  document.addEventListener('DOMContentLoaded', function () {
    $('token-form').addEventListener('submit', function (event) {
      event.preventDefault();
      var value = $('token').value.trim();
      if (!value) return;
      if (!TOKEN_FORMAT.test(value)) return signOut(BAD_TOKEN);
      try { sessionStorage.setItem(TOKEN_KEY, value); } catch (e) { /* storage disabled */ }
      $('token').value = '';
      state.filters = readFilters();
      state.listLoaded = false;
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
    $('refresh').addEventListener('click', function () {
      loadList();
      loadHealth();
    });
    $('download-csv').addEventListener('click', downloadCsv);
    $('detail-refresh').addEventListener('click', function () {
      if (state.detailId) loadDetail(state.detailId, true);
    });
    $('next').addEventListener('click', function () {
      if (!state.nextCursor) return;
      state.cursors[state.index + 1] = state.nextCursor;
      state.index += 1;
      loadList();
    });
    $('prev').addEventListener('click', function () {
      if (state.index === 0) return;
      state.index -= 1;
      loadList();
    });
    // A transaction link of the list fragment opens it here (#tx=…) instead of the no-script page.
    $('list-table').addEventListener('click', function (event) {
      var link = event.target.closest && event.target.closest('a[data-tx]');
      if (!link) return;
      event.preventDefault();
      location.hash = 'tx=' + encodeURIComponent(link.getAttribute('data-tx'));
    });
    $('main').addEventListener('click', onAction);
    // Back link (#list), browser back and forward all change the hash; one listener routes them.
    window.addEventListener('hashchange', route);
    // On a phone the filters start folded, so the transactions are on the first screen.
    if (window.matchMedia && window.matchMedia('(max-width: 40rem)').matches) $('filter-panel').open = false;
    state.filters = readFilters();
    route();
  });
})();
