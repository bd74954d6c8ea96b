'use strict';
// The library page: the cards of videos being indexed follow their progress. Every 2 s
// it asks /api/videos?state=processing and ?state=queued (small answers: only those
// videos) and updates each card's bar, steps and state; a card whose video left both
// lists is asked once by id for its final state. A video added while the page is open
// (by this page's form, another browser or `vidtheque add`) gets a card where the page
// would list it (ul.cards[data-new]: the newest videos polled every 2 s). Without the
// script the page is what it was when loaded: reloading it shows where the indexing is.
(function () {
  var WORDS = { queued: 'Waiting', processing: 'Being indexed', ready: 'Ready', failed: 'Failed' };
  var PERIOD_MS = 2000;

  function live() {
    return document.querySelectorAll('li.card[data-state="processing"], li.card[data-state="queued"]');
  }

  function getJSON(url) {
    return fetch(url, { headers: { Accept: 'application/json' } }).then(function (r) {
      if (!r.ok) throw new Error(url + ': ' + r.status);
      return r.json();
    });
  }

  function setState(card, state, dataStatus) {
    var badge = card.querySelector('[data-role="state"]');
    card.setAttribute('data-state', state);
    if (badge) {
      badge.className = 'badge state-' + state;
      badge.textContent = WORDS[state] || 'Unknown';
    }
    if (state === 'ready' && dataStatus && dataStatus !== 'ok' && badge && !badge.nextElementSibling) {
      var d = document.createElement('span');
      d.className = 'badge data-' + dataStatus;
      d.textContent = dataStatus === 'partial' ? 'Some parts missing' : 'Nothing stored';
      badge.parentNode.appendChild(document.createTextNode(' '));
      badge.parentNode.appendChild(d);
    }
  }

  function setProgress(card, v) {
    var bar = card.querySelector('progress');
    var steps = card.querySelector('[data-role="steps"]');
    if (bar) {
      bar.max = v.stages_total;
      bar.value = v.stages_finished;
    }
    if (steps) {
      steps.textContent = v.stages_finished + ' of ' + v.stages_total +
        (v.stages_total === 1 ? ' step' : ' steps') + ' done' + (v.running ? ', now ' + v.running : '');
    }
  }

  function finish(card, v) {
    var p = card.querySelector('.progress');
    if (p) p.parentNode.removeChild(p);
    setState(card, v.index_state, v.data_status);
    if (v.poster && !card.querySelector('img.thumb')) {
      // the first frame arrived while indexing: show it (same markup as the server's)
      var a = card.querySelector('a.poster');
      var img = document.createElement('img');
      img.className = 'thumb';
      img.src = v.poster;
      img.alt = '';
      img.width = 320;
      img.height = 180;
      if (a) a.replaceChildren(img);
    }
  }

  function poll() {
    var cards = live();
    if (!cards.length) return;
    Promise.all([getJSON('/api/videos?state=processing'), getJSON('/api/videos?state=queued')])
      .then(function (lists) {
        var seen = {};
        lists.forEach(function (l) {
          l.videos.forEach(function (v) { seen[v.id] = v; });
        });
        var done = [];
        cards.forEach(function (card) {
          var v = seen[card.getAttribute('data-id')];
          if (v) {
            setState(card, v.index_state);
            setProgress(card, v);
          } else {
            done.push(card);
          }
        });
        return Promise.all(done.map(function (card) {
          var id = card.getAttribute('data-id');
          return getJSON('/api/videos?id=' + encodeURIComponent(id)).then(function (l) {
            var v = l.videos.filter(function (x) { return x.id === id; })[0];
            if (v) finish(card, v);
            else card.setAttribute('data-state', 'gone');
          });
        }));
      })
      .then(function () { setTimeout(poll, PERIOD_MS); },
        function () { setTimeout(poll, PERIOD_MS * 5); });
  }

  if (live().length) setTimeout(poll, PERIOD_MS);

  // ---- videos added while the page is open: a card each, where this page shows it ----
  var list = document.querySelector('ul.cards[data-new]');

  function newCard(v) {
    var li = document.createElement('li'), a = document.createElement('a');
    li.className = 'card';
    li.setAttribute('data-id', v.id);
    li.setAttribute('data-state', v.index_state);
    a.className = 'poster';
    a.href = '/v/' + encodeURIComponent(v.id);
    a.tabIndex = -1;
    a.setAttribute('aria-hidden', 'true');
    var none = document.createElement('span');
    none.className = 'nothumb';
    none.textContent = 'No picture yet';
    a.appendChild(none);
    li.appendChild(a);
    var h = document.createElement('h2'), t = document.createElement('a');
    h.className = 'title';
    t.href = a.href;
    t.textContent = v.title || v.id;
    h.appendChild(t);
    li.appendChild(h);
    var meta = document.createElement('p');
    meta.className = 'meta';
    meta.textContent = (v.channel ? v.channel + ' · ' : '') + 'added ' + (v.added_at || '').slice(0, 10);
    li.appendChild(meta);
    var st = document.createElement('p'), badge = document.createElement('span');
    st.className = 'state';
    badge.setAttribute('data-role', 'state');
    st.appendChild(badge);
    li.appendChild(st);
    if (v.index_state === 'queued' || v.index_state === 'processing') {
      var p = document.createElement('div'), bar = document.createElement('progress');
      var steps = document.createElement('span');
      p.className = 'progress';
      bar.setAttribute('aria-label', 'Indexing progress');
      steps.setAttribute('data-role', 'steps');
      p.appendChild(bar);
      p.appendChild(document.createTextNode(' '));
      p.appendChild(steps);
      li.appendChild(p);
      setProgress(li, v);
    }
    setState(li, v.index_state, v.data_status);
    if (v.index_state !== 'queued' && v.index_state !== 'processing') finish(li, v);
    return li;
  }

  function watchNew() {
    var since = list.getAttribute('data-since') || '';
    getJSON('/api/videos?sort=newest&limit=20').then(function (l) {
      var fresh = l.videos.filter(function (v) {
        return (v.added_at || '') >= since && !list.querySelector('li.card[data-id="' + v.id + '"]');
      });
      if (!fresh.length) return;
      var wasLive = live().length;
      // oldest first at the end of the list, newest first at its start
      fresh.reverse().forEach(function (v) {
        var card = newCard(v);
        if (list.getAttribute('data-new') === 'start') list.insertBefore(card, list.firstChild);
        else list.appendChild(card);
      });
      list.hidden = false;
      var empty = document.querySelector('div.empty');
      if (empty) empty.hidden = true;
      if (!wasLive && live().length) setTimeout(poll, PERIOD_MS);
    }).then(function () { setTimeout(watchNew, PERIOD_MS); },
      function () { setTimeout(watchNew, PERIOD_MS * 5); });
  }

  if (list && window.fetch) setTimeout(watchNew, PERIOD_MS);
})();
