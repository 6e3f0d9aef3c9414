/**
 * The event page's script for its attendee rows (inline, given the response's nonce by pages.ts). Without
 * it the form is complete: every row the registration may name, blank ones ignored. With it the form starts
 * short, "Add another attendee" adds a row up to data-max, and each row's "Remove" button takes it away;
 * the rows after it are numbered again (labels, ids, messages and the summary's links with them), so what
 * is posted and what the page says stay in step. Plain ES5 for any phone's browser; no `{{` (Handlebars).
 */
export const ATTENDEE_ROWS_SCRIPT = `
  <script>
  (function () {
    var button = document.getElementById('add-attendee');
    var list = document.getElementById('attendees');
    if (!button || !list) return;
    var max = Number(button.getAttribute('data-max'));
    var initial = Number(button.getAttribute('data-initial'));
    var status = document.getElementById('attendee-status');
    var rows = function () { return list.querySelectorAll('.attendee'); };
    var nameOf = function (row) { return row.querySelector('input'); };

    // The blank rows past the first few go; "Add another attendee" brings them back one at a time.
    var all = rows();
    for (var i = all.length - 1; i >= initial && nameOf(all[i]).value.trim() === ''; i--) all[i].remove();

    function renamed(id, n) { return id.replace(/^attendee-(name|tier)-\\d+/, 'attendee-$1-' + n); }
    function retitled(text, n) { return text.replace(/^Attendee \\d+/, 'Attendee ' + n); }

    // Everything in a row that says its number, said again as row n.
    function number(row, n) {
      row.querySelectorAll('label').forEach(function (label) {
        label.htmlFor = renamed(label.htmlFor, n);
        label.textContent = 'Attendee ' + n + (label.htmlFor.indexOf('attendee-name') === 0 ? ' name' : ' ticket');
      });
      row.querySelectorAll('input, select').forEach(function (field) {
        field.id = renamed(field.id, n);
        var described = field.getAttribute('aria-describedby');
        if (described) field.setAttribute('aria-describedby', described.split(' ').map(function (id) { return renamed(id, n); }).join(' '));
      });
      row.querySelectorAll('.field-error').forEach(function (message) {
        message.id = renamed(message.id, n);
        message.textContent = retitled(message.textContent, n);
      });
      row.querySelector('.remove-attendee').setAttribute('aria-label', 'Remove attendee ' + n);
    }

    // The summary at the top: the removed row's lines go, the later rows' lines follow their rows.
    function summaryWithout(position) {
      var summary = document.querySelector('.errors');
      if (!summary) return;
      summary.querySelectorAll('li[data-field]').forEach(function (line) {
        var field = line.getAttribute('data-field');
        var match = /^attendees\\[(\\d+)\\]/.exec(field);
        if (!match) return;
        var index = Number(match[1]);
        if (index + 1 === position) { line.remove(); return; }
        if (index + 1 < position) return;
        line.setAttribute('data-field', field.replace(/^attendees\\[\\d+\\]/, 'attendees[' + (index - 1) + ']'));
        var link = line.querySelector('a');
        if (link) link.setAttribute('href', '#' + renamed(link.getAttribute('href').slice(1), index));
        (link || line).textContent = retitled((link || line).textContent, index);
      });
      if (!summary.querySelector('li')) summary.remove();
    }

    // The problem with the attendees as a whole describes the first row's name, whichever row that now is.
    function describeFirstRow() {
      if (!document.getElementById('attendees-error')) return;
      var first = nameOf(rows()[0]);
      var ids = (first.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
      if (ids.indexOf('attendees-error') < 0) first.setAttribute('aria-describedby', ['attendees-error'].concat(ids).join(' '));
    }

    function update() {
      var count = rows().length;
      button.hidden = count >= max;
      list.querySelectorAll('.remove-attendee').forEach(function (remove) { remove.hidden = count <= 1; });
    }

    button.addEventListener('click', function () {
      var current = rows();
      if (current.length >= max) return;
      var row = current[current.length - 1].cloneNode(true);
      // A new row starts clean: no copy of the last row's message or its marks.
      row.querySelectorAll('.field-error').forEach(function (message) { message.remove(); });
      row.querySelectorAll('input, select').forEach(function (field) {
        field.removeAttribute('aria-invalid');
        field.removeAttribute('aria-describedby');
        field.removeAttribute('autofocus');
      });
      number(row, current.length + 1);
      nameOf(row).value = '';
      row.querySelector('select').selectedIndex = 0;
      list.insertBefore(row, status);
      update();
      nameOf(row).focus();
    });

    list.addEventListener('click', function (event) {
      var remove = event.target.closest ? event.target.closest('.remove-attendee') : null;
      if (!remove) return;
      var current = Array.prototype.slice.call(rows());
      if (current.length <= 1) return;
      var row = remove.closest('.attendee');
      var position = current.indexOf(row) + 1;
      var name = nameOf(row).value.trim();
      row.remove();
      summaryWithout(position);
      rows().forEach(function (later, index) { number(later, index + 1); });
      describeFirstRow();
      update();
      var left = rows();
      nameOf(left[Math.min(position, left.length) - 1]).focus();
      if (status) status.textContent = 'Removed attendee ' + position + (name ? ' (' + name + ')' : '') + '.';
    });

    update();
  })();
  </script>`;
