'use strict';
// The forms that manage the library (src/web_manage.c). Without this script they work
// all the same: "Remove…" posts to a confirmation page. With it, the question is asked
// in a dialog and the form goes straight through, confirmed.
(function () {
  document.addEventListener('submit', function (e) {
    var f = e.target;
    if (!f || !f.matches || !f.matches('form[data-confirm]')) return;
    if (!window.confirm(f.getAttribute('data-confirm'))) {
      e.preventDefault();
      return;
    }
    if (!f.querySelector('input[name="confirm"]')) {
      var yes = document.createElement('input');
      yes.type = 'hidden';
      yes.name = 'confirm';
      yes.value = 'yes';
      f.appendChild(yes);
    }
  });
  // a form sent twice queues its job twice: the button waits for the next page
  document.addEventListener('submit', function (e) {
    if (e.defaultPrevented || !e.target.matches || !e.target.matches('section.manage form')) return;
    var b = e.target.querySelector('button');
    if (b) b.disabled = true;
  });
})();
