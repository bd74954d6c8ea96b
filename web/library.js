'use strict';
// The library page: the cards of videos being indexed follow their progress. Every 2 s
// it asks /api/videos?state=processing and ?state=queued (small answers: only those
// videos) and updates each card's bar, steps and state; a card whose video left both
// lists is asked once by id for its final state. Without the script the page is what it
// was when loaded: reloading it shows where the indexing is.
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
})();
