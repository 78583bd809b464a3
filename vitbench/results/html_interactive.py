"""Sorting and filtering the tables of the HTML leaderboard, inline (the page stands alone: no network, no files).

* A click on a column header sorts its table by that column: ascending, then descending on the next click. A
  column whose cells read as numbers (``82.6 (paper 83.1, Δ -0.5)``, ``41.2 ± 0.8 (n=3)``, ``+3.2 [+1.1, +5.3]``)
  sorts by each cell's leading number, others as text (case-insensitive, digits by value); empty cells come last
  either way, and cells that tie keep the page's order.
* The text box above the tables hides, in every table, the rows that do not contain its text (case-insensitive).
* The state lives in the URL fragment, so that a link (or a headless browser) reaches it:
  ``leaderboard.html#sort=COLUMN&dir=desc&filter=TEXT`` (``table=ID`` sorts another table than the measured one:
  ``deltas``, ``rank``, ``paper-<table id>``, or ``table-N``, the N-th table of the page from 1). COLUMN is a
  header's text, case-insensitive; URL-encoded, as the page writes it back (``sort=ADE20k+mIoU+SS``).
"""
import html

MEASURED_ID = 'measured'  # the table a fragment without `table=` sorts

CSS = """
th.sortable { cursor: pointer; user-select: none; }
th.sortable:hover { background: #e4e4e4; }
th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: 0.75em; }
th[aria-sort="descending"]::after { content: " \\25BC"; font-size: 0.75em; }
.table-filter { margin: 0.5em 0 1em; }
.table-filter input { font: inherit; padding: 0.2em 0.4em; width: 22em; }
.table-filter output { color: #666; margin-left: 0.8em; }
"""

# ES2017, no library. Rows are moved within their <tbody>; hidden rows get the `hidden` attribute.
SCRIPT = r"""
(function () {
  'use strict';
  var MAIN = '%(main)s';
  var NUMBER = /^\s*([+\-\u2212]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+\-]?\d+)?)/;
  var tables = Array.prototype.filter.call(document.querySelectorAll('table'), function (t) {
    return t.tHead && t.tHead.rows.length && t.tBodies.length;
  });
  var box = document.getElementById('table-filter');
  var count = document.getElementById('table-filter-count');
  var state = {table: MAIN, sort: '', dir: 'asc', filter: ''};

  function text(cell) { return cell ? cell.textContent.trim() : ''; }
  function leadingNumber(s) {
    var m = NUMBER.exec(s);
    return m ? parseFloat(m[1].replace('\u2212', '-')) : null;
  }
  // the column names: the header's last line (a line of group titles may come above it)
  function headers(table) {
    return Array.prototype.slice.call(table.tHead.rows[table.tHead.rows.length - 1].cells);
  }
  function rows(table) { return Array.prototype.slice.call(table.tBodies[0].rows); }

  function sortTable(table, index, descending) {
    var all = rows(table);
    var filled = all.map(function (r) { return text(r.cells[index]); }).filter(function (s) { return s; });
    var numbers = filled.filter(function (s) { return leadingNumber(s) !== null; }).length;
    var numeric = numbers > 0 && 2 * numbers >= filled.length;
    var keyed = all.map(function (row) {
      var s = text(row.cells[index]);
      var n = numeric && s ? leadingNumber(s) : null;
      // rank 0: a value; 1: text in a column of numbers ('diverged'); 2: empty. Ranks ignore the direction.
      return {row: row, order: +row.dataset.order, rank: !s ? 2 : (numeric && n === null ? 1 : 0), n: n, s: s};
    });
    keyed.sort(function (a, b) {
      if (a.rank !== b.rank) return a.rank - b.rank;
      var d = 0;
      if (a.rank === 0 && numeric) d = a.n - b.n;
      else if (a.rank !== 2) d = a.s.localeCompare(b.s, undefined, {numeric: true, sensitivity: 'base'});
      return (descending ? -d : d) || a.order - b.order;
    });
    keyed.forEach(function (k) { table.tBodies[0].appendChild(k.row); });
    headers(table).forEach(function (th, i) {
      if (i === index) th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    });
  }

  function filterRows(needle) {
    needle = needle.trim().toLowerCase();
    var shown = 0, total = 0;
    tables.forEach(function (table) {
      rows(table).forEach(function (row) {
        row.hidden = needle !== '' && row.textContent.toLowerCase().indexOf(needle) < 0;
        total += 1;
        shown += row.hidden ? 0 : 1;
      });
    });
    count.value = needle ? shown + ' of ' + total + ' rows' : '';
  }

  function tableNamed(id) { return document.getElementById(id || MAIN); }
  function columnOf(table, name) {
    name = name.trim().toLowerCase();
    return headers(table).findIndex(function (th) { return text(th).toLowerCase() === name; });
  }

  function readFragment() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ''));
    return {table: p.get('table') || MAIN, sort: p.get('sort') || '', dir: p.get('dir') === 'desc' ? 'desc' : 'asc',
            filter: p.get('filter') || ''};
  }
  function writeFragment() {
    var p = new URLSearchParams();
    if (state.sort) {
      if (state.table !== MAIN) p.set('table', state.table);
      p.set('sort', state.sort);
      if (state.dir === 'desc') p.set('dir', 'desc');
    }
    if (state.filter) p.set('filter', state.filter);
    var fragment = p.toString();
    var url = location.pathname + location.search + (fragment ? '#' + fragment : '');
    try {
      history.replaceState(null, '', url);  // no hashchange: the page is already in this state
    } catch (e) {  // browsers that refuse it for file:// pages
      location.hash = fragment;
    }
  }
  function apply(next) {
    state = next;
    if (box.value !== state.filter) box.value = state.filter;
    filterRows(state.filter);
    var table = state.sort ? tableNamed(state.table) : null;
    var index = table && table.tHead ? columnOf(table, state.sort) : -1;
    if (index >= 0) sortTable(table, index, state.dir === 'desc');
  }

  tables.forEach(function (table, t) {
    if (!table.id) table.id = 'table-' + (t + 1);
    rows(table).forEach(function (row, i) { row.dataset.order = i; });
    headers(table).forEach(function (th, index) {
      th.classList.add('sortable');
      th.tabIndex = 0;
      th.title = 'sort by this column';
      function click() {
        var descending = th.getAttribute('aria-sort') === 'ascending';
        sortTable(table, index, descending);
        state.table = table.id;
        state.sort = text(th);
        state.dir = descending ? 'desc' : 'asc';
        writeFragment();
      }
      th.addEventListener('click', click);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); click(); }
      });
    });
  });
  box.addEventListener('input', function () {
    state.filter = box.value;
    filterRows(state.filter);
    writeFragment();
  });
  window.addEventListener('hashchange', function () { apply(readFragment()); });
  apply(readFragment());
})();
""" % dict(main=MEASURED_ID)


def filter_box() -> str:
    """The text box that filters the rows of every table (the script finds it by its id)."""
    hint = 'filter rows: text any cell contains, e.g. a backbone or a recipe'
    return ('<p class="table-filter"><label>Filter rows <input id="table-filter" type="search" '
            f'placeholder="{html.escape(hint)}" aria-label="{html.escape(hint)}"></label>'
            '<output id="table-filter-count" aria-live="polite"></output></p>')


def script() -> str:
    """The page's last element: it runs once the tables above it are in the document."""
    return f'<script>{SCRIPT}</script>'
