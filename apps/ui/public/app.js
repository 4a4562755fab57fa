// The interactive page's own script, beside htmx (/ui/assets/htmx.min.js), which fetches every view
// as a fragment the ui's templates rendered and swaps it in (the hx-* attributes of the page and of
// the fragments). This file does only what htmx does not:
// - the API token: kept in this tab's sessionStorage, added as the serviceApiToken header to every
//   htmx request (htmx:configRequest), never put in a URL, a cookie or the console; a 401 forgets it;
// - errors: the gateway answers problem+json, the ui an HTML fragment; both go to the view's status box;
// - which view shows (#tx=<id>, #statement), and the CSV downloads (fetched with the header).
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
  var LOCAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/;
  var $ = function (id) { return document.getElementById(id); };
  var loaded = {};
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
      if (name === 'htmx:configRequest') event.detail.headers['Content-Type'] = 'application/json';
    },
    encodeParameters: function (xhr, parameters) {
      xhr.overrideMimeType('text/json');
      return JSON.stringify(Object.fromEntries(parameters));
    },
  });

  // Every htmx request: the token header, fragments of the views, instants for local times, no empty fields.
  document.addEventListener('htmx:configRequest', function (event) {
    var d = event.detail;
    d.headers.serviceApiToken = token() || '';
    d.headers.Accept = d.elt.hasAttribute('data-action') ? 'application/json' : 'text/html';
    if (d.verb === 'get') d.headers['x-ui-fragment'] = '1';
    Array.from(d.formData.entries()).forEach(function (entry) {
      if (entry[1] === '') d.formData.delete(entry[0]);
      else d.formData.set(entry[0], instant(entry[1]));
    });
  });

  // ---- Status boxes: loading, errors, Retry ------------------------------------------------------

  var parser = new DOMParser();

  /** Where a request's outcome is said: an action's own line, or the status box its view names. */
  function statusBox(elt) {
    var action = elt.closest('.event-actions, [data-recover]');
    if (action) return action.querySelector('.action-status');
    var host = elt.closest('[data-status-box]');
    return host && $(host.getAttribute('data-status-box'));
  }

  function setStatus(box, kind, content, retry) {
    if (!box) return;
    box.classList.remove('error', 'loading');
    if (kind) box.classList.add(kind);
    if (box.classList.contains('action-status')) {
      box.textContent = !content || typeof content === 'string' ? content || '' : content.textContent;
      return;
    }
    box.replaceChildren();
    if (!content) return;
    if (typeof content === 'string') {
      var p = document.createElement('p');
      p.textContent = content;
      content = p;
    }
    box.appendChild(content);
    if (retry) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary';
      button.textContent = 'Retry';
      button.addEventListener('click', retry);
      box.appendChild(button);
    }
  }

  /**
   * A problem+json body as one sentence: its detail, then each offending field and why that the
   * detail does not already spell out, so a 400 says which field to fix. Paths arrive as
   * "querystring:/orderId" or "/since": the field's name is what the merchant knows.
   */
  function problemText(problem) {
    if (!problem || typeof problem !== 'object') return null;
    var detail = typeof problem.detail === 'string' ? problem.detail : '';
    var fields = (Array.isArray(problem.errors) ? problem.errors : []).map(function (e) {
      return String(e.path || '').replace(/^\w*:/, '').replace(/^\//, '') + ': ' + String(e.message).replace(/\.$/, '');
    }).filter(function (field) { return detail.indexOf(field) === -1; });
    return [detail].concat(fields).filter(Boolean).join(' ') || null;
  }

  /** A failed answer: the ui's HTML error fragment as it is, else a sentence from the problem+json. */
  function failure(status, header, text) {
    if ((header('Content-Type') || '').indexOf('text/html') === 0) {
      return document.adoptNode(parser.parseFromString(text, 'text/html').body.firstElementChild || document.createElement('div'));
    }
    if (status === 429) return 'Too many requests. Wait ' + (header('Retry-After') || 'a few') + ' seconds, then retry.';
    if (status === 503) return 'The service is unavailable right now. Retry in a moment.';
    var problem = null;
    try { problem = JSON.parse(text); } catch (e) { /* not JSON */ }
    return (problemText(problem) || 'Something went wrong') + ' (HTTP ' + status + ')';
  }

  function xhrFailure(xhr) {
    return failure(xhr.status, function (name) { return xhr.getResponseHeader(name); }, xhr.responseText);
  }

  /** The same request once more (the Retry button). */
  function again(d) {
    return function () {
      htmx.ajax(d.requestConfig.verb, d.pathInfo.requestPath, { source: d.elt, target: d.target }).catch(function () {});
    };
  }

  document.addEventListener('htmx:beforeRequest', function (event) {
    var d = event.detail;
    d.target.setAttribute('aria-busy', 'true');
    var loading = d.elt.closest('[data-loading]');
    if (loading && !d.target.hasChildNodes()) setStatus(statusBox(d.elt), 'loading', loading.getAttribute('data-loading'));
  });
  document.addEventListener('htmx:afterRequest', function (event) {
    event.detail.target.removeAttribute('aria-busy');
  });
  document.addEventListener('htmx:sendError', function (event) {
    setStatus(statusBox(event.detail.elt), 'error', NETWORK_ERROR, again(event.detail));
  });

  /** The transaction shown is the one asked for: a late answer for another one is dropped. */
  function isShownDetail(d) {
    var query = d.pathInfo.requestPath.split('?')[1] || '';
    return new URLSearchParams(query).get('id') === detailId;
  }

  document.addEventListener('htmx:beforeSwap', function (event) {
    var d = event.detail;
    var xhr = d.xhr;
    if (!token()) return void (d.shouldSwap = false); // signed out meanwhile
    if (xhr.status === 401) {
      d.shouldSwap = false;
      return signOut(BAD_TOKEN);
    }
    if (d.target.id === 'detail-body' && !isShownDetail(d)) return void (d.shouldSwap = false);
    var action = d.elt.getAttribute('data-action');
    if (action) {
      d.shouldSwap = false;
      return ACTIONS[action](xhr, statusBox(d.elt));
    }
    if (xhr.status >= 400) {
      d.shouldSwap = false;
      var final = xhr.status === 400 || xhr.status === 404;
      return setStatus(statusBox(d.elt), 'error', xhrFailure(xhr), final ? null : again(d));
    }
    setStatus(statusBox(d.elt), '', '');
    if (d.target.id === 'detail-body') keepOpen = openEarlierAttempts();
  });

  // The refresh of a transaction still moving (every 3 s) replaces its events: the earlier attempts
  // someone opened stay open.
  var keepOpen = [];
  function openEarlierAttempts() {
    return Array.prototype.map.call(document.querySelectorAll('#detail-body details.earlier-attempts[open]'), function (el) {
      return el.getAttribute('data-event');
    });
  }
  document.addEventListener('htmx:afterSwap', function (event) {
    if (event.detail.target.id !== 'detail-body') return;
    document.querySelectorAll('#detail-body details.earlier-attempts').forEach(function (el) {
      if (keepOpen.indexOf(el.getAttribute('data-event')) >= 0) el.open = true;
    });
    keepOpen = [];
  });

  // ---- Actions on server-rendered buttons: what their answer means --------------------------------

  var ACTIONS = {
    // A new series of attempts for one event: the refreshed detail follows it until it settles.
    // 409: a series started meanwhile (another tab, a recovery): the refresh shows it as it is now.
    redeliver: function (xhr, box) {
      if (xhr.status === 202) setStatus(box, '', 'Redelivery started.');
      else setStatus(box, 'error', xhrFailure(xhr));
      if ((xhr.status === 202 || xhr.status === 409) && detailId) loadDetail(detailId, true);
    },
    // Every failed or skipped callback since the chosen time: the views reload, and the message goes
    // into the refreshed health view's panel.
    recover: function (xhr, box) {
      if (xhr.status !== 202) return setStatus(box, 'error', xhrFailure(xhr));
      var n = JSON.parse(xhr.responseText).recovered;
      var done = n === 0
        ? 'Nothing to recover: no failed or skipped callbacks since then (or they are being sent already).'
        : 'Sending ' + n + (n === 1 ? ' callback' : ' callbacks') + ' again.';
      document.addEventListener('htmx:afterSwap', function said(event) {
        if (event.detail.target.id !== 'health-body') return;
        document.removeEventListener('htmx:afterSwap', said);
        setStatus(document.querySelector('#health-body [data-recover] .action-status'), '', done);
      });
      htmx.trigger(document.body, 'dw:moved');
    },
  };

  // ---- CSV downloads -----------------------------------------------------------------------------

  /** The form's non-empty fields among `names`, local times as instants. */
  function formQuery(form, names) {
    var query = new URLSearchParams();
    names.forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (value) query.set(name, instant(value));
    });
    return query.toString();
  }

  /**
   * Every row matching the form's filters (not one page) as the server's CSV, fetched with the token
   * header like every view (a plain link could not carry it), then handed to the browser as a file.
   */
  function downloadCsv(path, query, filename, box) {
    var retry = function () { downloadCsv(path, query, filename, box); };
    setStatus(box, 'loading', 'Preparing the CSV…');
    fetch(path + (query ? '?' + query : ''), {
      headers: { Accept: 'text/csv', serviceApiToken: token() || '' },
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    }).then(function (res) {
      if (res.status === 401) return signOut(BAD_TOKEN);
      if (res.status !== 200) {
        return res.text().then(function (text) {
          setStatus(box, 'error', failure(res.status, function (name) { return res.headers.get(name); }, text), retry);
        });
      }
      return res.blob().then(function (blob) {
        var link = document.createElement('a');
        link.href = URL.createObjectURL(blob);
        link.download = filename;
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(link.href); }, 0);
        setStatus(box, '', '');
      });
    }, function () {
      setStatus(box, 'error', NETWORK_ERROR, retry);
    });
  }

  // ---- Views: sign-in, the list, one transaction (#tx=<id>), the statement (#statement=<currency>) --

  var VIEWS = ['signin', 'list-view', 'detail-view', 'statement-view'];
  var FILLED = ['list-table', 'detail-body', 'health-body', 'balances-body', 'statement-table'];

  function show(section) {
    VIEWS.forEach(function (id) { $(id).hidden = id !== section; });
    $('sign-out').hidden = section === 'signin';
  }

  function signOut(message) {
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage disabled: nothing kept */ }
    loaded = {};
    detailId = null;
    FILLED.forEach(function (id) {
      $(id).replaceChildren();
      setStatus(statusBox($(id)), '', '');
    });
    $('filter-count').textContent = '';
    $('token').value = '';
    show('signin');
    var box = $('signin-error');
    box.textContent = message || '';
    box.hidden = !message;
    $('token').focus();
  }

  /** Loads one transaction; `quiet` (Refresh, after a redelivery) keeps what is shown until the answer arrives. */
  function loadDetail(id, quiet) {
    detailId = id;
    if (!quiet) {
      $('detail-title').textContent = 'Transaction';
      $('detail-body').replaceChildren();
    }
    htmx.ajax('GET', '/ui/viewTransaction?id=' + encodeURIComponent(id), { source: '#detail-body', target: '#detail-body' })
      .then(function () { if (!quiet && detailId === id) $('detail-title').focus(); }, function () {});
  }

  /** The text after #tx= or #statement=; null when its escapes are broken (decodeURIComponent throws). */
  function decoded(text) {
    try { return decodeURIComponent(text); } catch (e) { return null; }
  }

  function route() {
    // Leaving a transaction drops it, and with it the notice that would fetch it again.
    detailId = null;
    $('detail-body').replaceChildren();
    if (!token()) return signOut();
    var tx = /^#tx=(.*)$/.exec(location.hash);
    var statement = /^#statement(?:=(.*))?$/.exec(location.hash);
    if (tx) {
      show('detail-view');
      var id = decoded(tx[1]);
      if (id) return loadDetail(id);
      $('detail-title').textContent = 'Transaction';
      return setStatus($('detail-status'), 'error', INVALID_LINK);
    }
    if (statement) {
      show('statement-view');
      var currency = decoded(statement[1] || '') || '';
      if (currency !== $('s-currency').value) loaded.statement = false;
      $('s-currency').value = currency;
      if (!loaded.statement) htmx.trigger(document.body, 'dw:statement');
      loaded.statement = true;
      return;
    }
    show('list-view');
    if (!loaded.list) htmx.trigger(document.body, 'dw:load');
    loaded.list = true;
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
      $('signin-error').hidden = true;
      route();
    });
    $('sign-out').addEventListener('click', function () {
      signOut();
      if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    });
    $('detail-refresh').addEventListener('click', function () {
      if (detailId) loadDetail(detailId, true);
    });
    $('download-csv').addEventListener('click', function () {
      downloadCsv('/ui/viewTransaction', formQuery($('filters'), ['type', 'status', 'orderId', 'from', 'to']), 'transactions.csv', $('list-status'));
    });
    $('statement-csv').addEventListener('click', function () {
      downloadCsv('/api/getBalanceHistory', formQuery($('statement-filters'), ['currency', 'from', 'to']), 'statement.csv', $('statement-status'));
    });
    // Links of the fragments open a transaction or the statement here instead of the no-script page.
    $('main').addEventListener('click', function (event) {
      var link = event.target.closest && event.target.closest('a[data-tx], a[data-statement]');
      if (!link) return;
      event.preventDefault();
      var tx = link.getAttribute('data-tx');
      var currency = link.getAttribute('data-statement');
      location.hash = tx ? 'tx=' + encodeURIComponent(tx) : 'statement' + (currency ? '=' + encodeURIComponent(currency) : '');
    });
    // Back links (#list), browser back and forward all change the hash; one listener routes them.
    window.addEventListener('hashchange', route);
    // On a phone the filters start folded, so the transactions are on the first screen.
    if (window.matchMedia && window.matchMedia('(max-width: 40rem)').matches) $('filter-panel').open = false;
    route();
  });
})();
