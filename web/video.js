'use strict';
// The video page: seeking from shots, frames and cues (anything with data-t), the
// current cue, ?t= on load, and "Open at this second" following the player.
(function () {
  var player = document.getElementById('player');
  var strip = document.querySelector('.strip');
  if (strip) {
    var d = parseFloat(strip.getAttribute('data-duration'));
    var kfs = strip.querySelectorAll('a.kf');
    if (d > 0 && kfs.length) {
      strip.classList.add('placed');
      var w = strip.clientWidth - 116;
      for (var i = 0; i < kfs.length; i++) {
        var t = parseFloat(kfs[i].getAttribute('data-t')) || 0;
        kfs[i].style.left = Math.max(0, Math.round(w * t / d)) + 'px';
      }
    }
  }
  if (!player) return;
  var cues = document.querySelectorAll('li.cue');
  var open = document.getElementById('open-at');
  var current = null;
  function seek(t) {
    if (!isFinite(t) || t < 0) return;
    player.currentTime = t;
    var p = player.play();
    if (p && p.catch) p.catch(function () {});
  }
  document.addEventListener('click', function (e) {
    var a = e.target.closest ? e.target.closest('[data-t]') : null;
    if (!a) return;
    if (a.tagName === 'A') e.preventDefault();
    seek(parseFloat(a.getAttribute('data-t')));
    player.scrollIntoView({block: 'nearest'});
  });
  player.addEventListener('timeupdate', function () {
    var t = player.currentTime, found = null;
    for (var i = 0; i < cues.length; i++) {
      var s = parseFloat(cues[i].getAttribute('data-t'));
      var e = parseFloat(cues[i].getAttribute('data-end'));
      if (t >= s && t < e) { found = cues[i]; break; }
    }
    if (found !== current) {
      if (current) current.classList.remove('current');
      if (found) found.classList.add('current');
      current = found;
    }
    if (open) open.href = location.pathname + '?t=' + Math.floor(t);
  });
  var m = /[?&]t=([0-9]+(?:\.[0-9]+)?)/.exec(location.search);
  if (m) {
    var t0 = parseFloat(m[1]);
    var go = function () { player.currentTime = t0; };
    if (player.readyState >= 1) go();
    else player.addEventListener('loadedmetadata', go, {once: true});
  }
})();
