'use strict';
// The seek bar under the player (web_chapters.c): the chapter under the pointer and the
// storyboard's small frame of that moment shown above it, as players do; a click or a tap
// seeks there. The storyboard (/api/videos/ID/storyboard: which kept frame shows which
// moment, from when) is read once, at the first hover or touch. The chapter being played
// is marked on the bar and named under it. Without the script the chapters are links.
(function () {
  var bar = document.getElementById('seekbar');
  var player = document.getElementById('player');
  if (!bar || !player) return;
  var svg = bar.querySelector('svg');
  var pop = bar.querySelector('.sbpop');
  var img = pop.querySelector('img'), at = pop.querySelector('.sbt'), name = pop.querySelector('.sbc');
  var span = parseFloat(bar.getAttribute('data-span'));
  var chaps = Array.prototype.slice.call(bar.querySelectorAll('a.chap'));
  var now = document.getElementById('chapnow');
  var nowText = now ? now.textContent : '';
  var board = null, asked = false, last = -1, shown = null;

  function num(el, n) { return parseFloat(el.getAttribute(n)); }

  function hms(t) {
    t = Math.max(0, Math.floor(t));
    var h = Math.floor(t / 3600), m = Math.floor(t / 60) % 60, s = t % 60;
    return (h ? h + ':' + (m < 10 ? '0' : '') : '') + m + ':' + (s < 10 ? '0' : '') + s;
  }

  function chapterAt(t) {
    var found = null;
    for (var i = 0; i < chaps.length; i++) {
      if (t >= num(chaps[i], 'data-t') && t < num(chaps[i], 'data-end') + 1e-3) found = chaps[i];
    }
    return found;
  }

  function load() {
    if (asked || !window.fetch) return;
    asked = true;
    fetch(bar.getAttribute('data-board')).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (d) {
      board = d && d.frames ? d.frames : [];
      if (last >= 0 && !pop.hidden) preview(last);
    }).catch(function () { board = []; });
  }

  // the kept frame that shows moment t: the last that shows from t or before
  function frameAt(t) {
    var lo = 0, hi = board.length - 1, f = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (board[mid].start_s <= t + 1e-3) { f = board[mid].frame; lo = mid + 1; } else hi = mid - 1;
    }
    return f < 0 && board.length ? board[0].frame : f;
  }

  function timeOf(e) {
    var r = svg.getBoundingClientRect();
    var x = Math.max(0, Math.min(r.width, e.clientX - r.left));
    return r.width > 0 ? span * x / r.width : 0;
  }

  function preview(t) {
    last = t;
    var c = chapterAt(t);
    at.textContent = hms(t);
    name.textContent = c ? c.getAttribute('data-title') : '';
    name.hidden = !c;
    var f = board ? frameAt(t) : -1;
    img.hidden = f < 0;
    if (f >= 0) {
      var src = bar.getAttribute('data-frame') + f + '.jpg?size=small';
      if (img.getAttribute('src') !== src) img.setAttribute('src', src);
    }
    pop.hidden = false;
    var r = svg.getBoundingClientRect(), w = pop.offsetWidth;
    var x = (span > 0 ? r.width * t / span : 0) - w / 2;
    pop.style.left = Math.max(0, Math.min(r.width - w, x)) + 'px';
    pop.setAttribute('data-t', t.toFixed(3));
  }

  function hide() { pop.hidden = true; last = -1; }

  bar.addEventListener('pointermove', function (e) {
    load();
    preview(timeOf(e));
  });
  bar.addEventListener('pointerdown', function (e) {
    load();
    preview(timeOf(e));
  });
  bar.addEventListener('pointerleave', function (e) {
    if (e.pointerType === 'mouse') hide();
  });
  // a touch leaves its preview up until the next touch elsewhere
  document.addEventListener('pointerdown', function (e) {
    if (!bar.contains(e.target)) hide();
  });
  // a click or a tap seeks to the moment under it, not to its chapter's start
  bar.addEventListener('click', function (e) {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    e.stopPropagation();
    var t = e.detail === 0 && e.target.closest && e.target.closest('a.chap')
      ? num(e.target.closest('a.chap'), 'data-t') // the keyboard: the chapter's start
      : timeOf(e);
    player.currentTime = t;
    var p = player.play();
    if (p && p.catch) p.catch(function () {});
  });
  // the keyboard: a chapter's preview on focus (not the focus a click or a tap gives)
  bar.addEventListener('focusin', function (e) {
    var a = e.target.closest ? e.target.closest('a.chap') : null;
    if (!a || (a.matches && !a.matches(':focus-visible'))) return;
    load();
    preview(num(a, 'data-t'));
  });
  bar.addEventListener('focusout', hide);

  // the chapter being played, marked and named
  function mark() {
    var c = chapterAt(player.currentTime);
    if (c === shown) return;
    if (shown) shown.classList.remove('on');
    if (c) c.classList.add('on');
    shown = c;
    if (now) now.textContent = c ? 'Chapter: ' + c.getAttribute('data-title') : nowText;
  }
  player.addEventListener('timeupdate', mark);
  player.addEventListener('seeked', mark);
})();
