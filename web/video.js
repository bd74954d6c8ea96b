'use strict';
// The video page, on top of a page that reads without it: seeking from anything with
// data-t (cues, shots, frames, OCR lines, hits) without moving the page; the current cue
// highlighted and kept in view inside the transcript's own scroll box; the playhead on the
// strip; keyframe previews on the strip; the transcript filter; keys (k or space, j/l,
// arrows, n/p for the query's hits); and, while the video is being indexed, its state
// polled and updated in place (a reload would stop the player).
(function () {
  var player = document.getElementById('player');
  var box = document.querySelector('.cuebox');
  var cues = Array.prototype.slice.call(document.querySelectorAll('li.cue'));
  var open = document.getElementById('open-at');
  var heads = document.querySelectorAll('svg .ph');
  // the search's hits in this video, in the search's order (best first, as /api/search
  // returns them): n and p walk this list, whatever their times
  var hits = Array.prototype.map.call(document.querySelectorAll('.hitlist a.hit'), function (a) {
    return {t: parseFloat(a.getAttribute('data-t')), rank: a.getAttribute('data-rank')};
  }).filter(function (h) { return isFinite(h.t); });
  var atHit = -1; // the hit walked to last (an index in hits), -1 before the first
  // the length the strip's percentages were computed with (the server's), else the player's
  var svg = document.querySelector('svg[data-length]');
  var length = svg ? num(svg, 'data-length') : 0;
  var current = null;
  var userScrolled = 0; // when the reader last scrolled the transcript box by hand

  function num(el, name) { return parseFloat(el.getAttribute(name)); }

  // ---- the search's hits: the one walked to, marked in the list and on the bars ----
  function walkedTo(rank) {
    if (rank === null) return;
    for (var i = 0; i < hits.length; i++) {
      if (hits[i].rank === rank) { atHit = i; break; }
    }
    var marks = document.querySelectorAll('a.hit[data-rank]');
    for (var k = 0; k < marks.length; k++) {
      if (marks[k].getAttribute('data-rank') === rank) marks[k].setAttribute('aria-current', 'true');
      else marks[k].removeAttribute('aria-current');
    }
  }
  // the best hit that starts at t (a link from /search opens at its hit's start), or null
  function hitRankAt(t) {
    for (var i = 0; i < hits.length; i++) {
      if (Math.abs(hits[i].t - t) < 0.0015) return hits[i].rank;
    }
    return null;
  }

  // Keep el visible inside the transcript box by scrolling the box alone, never the page.
  function keepInBox(el) {
    if (!box || !el) return;
    var b = box.getBoundingClientRect(), r = el.getBoundingClientRect();
    if (r.top >= b.top && r.bottom <= b.bottom) return;
    box.scrollTop += r.top - b.top - (b.height - r.height) / 3;
  }

  function cueAt(t) {
    for (var i = 0; i < cues.length; i++) {
      if (t >= num(cues[i], 'data-t') && t < num(cues[i], 'data-end')) return cues[i];
    }
    return null;
  }

  function showCurrent(t, follow) {
    var found = cueAt(t);
    if (found !== current) {
      if (current) current.classList.remove('current');
      if (found) found.classList.add('current');
      current = found;
      if (found && follow && Date.now() - userScrolled > 3000) keepInBox(found);
    }
  }

  function playhead(t) {
    if (!(length > 0)) return;
    var x = Math.max(0, Math.min(100, 100 * t / length)).toFixed(3) + '%';
    for (var i = 0; i < heads.length; i++) heads[i].setAttribute('x', x);
  }

  function seek(t) {
    if (!player || !isFinite(t) || t < 0) return;
    player.currentTime = t;
    showCurrent(t, true);
    playhead(t);
  }

  function play() {
    var p = player.play();
    if (p && p.catch) p.catch(function () {});
  }

  // ---- seeking: cue, shot, frame, line or hit ----
  document.addEventListener('click', function (e) {
    if (!player || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    var a = e.target.closest ? e.target.closest('[data-t]') : null;
    if (!a || a.id === 'player') return;
    e.preventDefault();
    if (a.classList.contains('hit')) walkedTo(a.getAttribute('data-rank'));
    seek(num(a, 'data-t'));
    play();
    // below the player's column (frames, shots' list), bring the player back into view;
    // from the transcript beside it, or the strip under it, the page stays where it is
    if (!a.closest('.watch')) player.scrollIntoView({block: 'nearest'});
  });

  // ---- the transcript filter ----
  var filter = document.getElementById('cue-filter');
  if (filter && cues.length) {
    filter.parentNode.hidden = false;
    var shown = filter.parentNode.querySelector('.shown');
    filter.addEventListener('input', function () {
      var q = filter.value.trim().toLowerCase(), n = 0;
      for (var i = 0; i < cues.length; i++) {
        var hide = q !== '' && cues[i].textContent.toLowerCase().indexOf(q) < 0;
        cues[i].hidden = hide;
        if (!hide) n++;
      }
      shown.textContent = q ? n + ' of ' + cues.length + (cues.length === 1 ? ' cue' : ' cues') : '';
    });
  }

  // ---- the strip: a shot's keyframe and time on hover or focus ----
  var strip = document.querySelector('.strip');
  var pop = strip && strip.querySelector('.kfpop');
  if (pop) {
    var img = pop.querySelector('img'), label = pop.querySelector('span');
    var show = function (e) {
      var a = e.target.closest ? e.target.closest('a.shot') : null;
      if (!a) return;
      var src = a.getAttribute('data-src');
      pop.hidden = false;
      img.hidden = !src;
      if (src && img.getAttribute('src') !== src) img.setAttribute('src', src);
      label.textContent = a.getAttribute('aria-label');
      var s = strip.getBoundingClientRect(), r = a.getBoundingClientRect();
      var w = pop.offsetWidth;
      var x = r.left + r.width / 2 - s.left - w / 2;
      pop.style.left = Math.max(0, Math.min(s.width - w, x)) + 'px';
    };
    var hide = function () { pop.hidden = true; };
    strip.addEventListener('mouseover', show);
    strip.addEventListener('focusin', show);
    strip.addEventListener('mouseleave', hide);
    strip.addEventListener('focusout', hide);
  }

  // ---- indexing: the state polled, shown in place ----
  var progress = document.getElementById('progress');
  if (progress && window.fetch) {
    var what = progress.querySelector('.what');
    var poll = function () {
      fetch(progress.getAttribute('data-state'), {cache: 'no-store'}).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (s) {
        if (!s) return;
        document.getElementById('state-words').textContent = s.state_words;
        document.getElementById('data-words').textContent = s.data_words;
        var done = s.index_state === 'ready' || s.index_state === 'failed';
        what.textContent = done
          ? 'Indexing has finished' + (s.error ? ': the ' + s.error.stage + ' stage failed (' + s.error.error + ').' : '.')
          : s.stages_finished + ' of ' + s.stages + ' stages finished.';
        if (!done) setTimeout(poll, 3000);
      }).catch(function () { setTimeout(poll, 10000); });
    };
    setTimeout(poll, 3000);
  }

  if (!player) return;
  // the keys are said where there is a keyboard: not on a phone or a tablet (style.css
  // hides them on a narrow screen too)
  var keys = document.getElementById('keys');
  if (keys && window.matchMedia && matchMedia('(hover: hover) and (pointer: fine)').matches) keys.hidden = false;

  // ---- following playback ----
  if (box) {
    var mark = function () { userScrolled = Date.now(); };
    box.addEventListener('wheel', mark, {passive: true});
    box.addEventListener('touchmove', mark, {passive: true});
    box.addEventListener('keydown', mark);
  }
  player.addEventListener('loadedmetadata', function () {
    if (!(length > 0) && isFinite(player.duration)) length = player.duration;
  });
  player.addEventListener('timeupdate', function () {
    var t = player.currentTime;
    showCurrent(t, true);
    playhead(t);
    if (open) open.href = location.pathname + '?t=' + Math.floor(t);
  });

  // ---- opened at a moment (?t=, a search hit): the player there, its cue in view ----
  var m = /[?&]t=([0-9]+(?:\.[0-9]+)?)/.exec(location.search);
  if (m) {
    var t0 = parseFloat(m[1]);
    walkedTo(hitRankAt(t0));
    var go = function () { player.currentTime = t0; };
    if (player.readyState >= 1) go();
    else player.addEventListener('loadedmetadata', go, {once: true});
    showCurrent(t0, true);
    if (!current) {
      // between cues: the next one said
      for (var i = 0; i < cues.length; i++) {
        if (num(cues[i], 'data-t') >= t0) { keepInBox(cues[i]); break; }
      }
    }
  }

  // ---- keys (not while typing; the player's own keys stay its own when it has focus) ----
  function step(d) {
    var t = player.currentTime + d;
    if (isFinite(player.duration)) t = Math.min(t, player.duration);
    seek(Math.max(0, t));
  }
  function hit(dir) {
    var i = atHit + dir;
    if (i < 0 || i >= hits.length) return;
    walkedTo(hits[i].rank);
    seek(hits[i].t);
  }
  document.addEventListener('keydown', function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    var el = e.target;
    if (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName))) return;
    var onPlayer = el === player;
    var onControl = el && /^(A|BUTTON|SUMMARY)$/.test(el.tagName);
    switch (e.key) {
      case 'k':
        if (player.paused) play(); else player.pause();
        break;
      case ' ':
        if (onPlayer || onControl) return;
        if (player.paused) play(); else player.pause();
        break;
      case 'j': step(-10); break;
      case 'l': step(10); break;
      case 'ArrowLeft': if (onPlayer) return; step(-5); break;
      case 'ArrowRight': if (onPlayer) return; step(5); break;
      case 'n': if (!hits.length) return; hit(1); break;
      case 'p': if (!hits.length) return; hit(-1); break;
      default: return;
    }
    e.preventDefault();
  });
})();
