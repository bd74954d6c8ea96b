'use strict';
// Every page: keyboard shortcuts that are not the player's. "/" focuses the search box.
(function () {
  document.addEventListener('keydown', function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (e.key === '/') {
      var q = document.querySelector('form.search input[name="q"]');
      if (q) {
        e.preventDefault();
        q.focus();
        q.select();
      }
    }
  });
})();
