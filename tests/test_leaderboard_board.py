"""The board a researcher reads at a glance (issue 47), on a board as wide as the demo's
(tests/_leaderboard_helpers.py: make_wide_runs) with the paper tables: in headless Chromium at 1280 and 1920 px the
downstream columns come first and are in view without scrolling, no table is cut off without a scroll bar, the
header and first column stay in view when a table scrolls, each interval is one small line under its number, and the
robustness columns wait folded in their own table; the plots carry every cell's interval and leave out what a single
x cannot show; the tidy CSV round-trips through pandas to the board's own cells. One Chromium launch per width."""
import csv
import io
import json
import runpy
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from _leaderboard_helpers import make_wide_runs, record, write
from _leaderboard_helpers import runs  # noqa: F401 - the fixture

from vitbench.results.reproduction import shown_tables
from vitbench.results.column_groups import column_groups, is_robustness
from vitbench.results.paper import load_paper_tables
from vitbench.results.plots import bars_figure, measured_figures, pareto_figure
from vitbench.results.render import render, render_html, tidy_path, write_leaderboard
from vitbench.results.render_tidy import FIELDS
from vitbench.results.table import Column, build_table

BROWSER = next((shutil.which(name) for name in ('chromium', 'chromium-browser') if shutil.which(name)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason='chromium is not installed (Debian package chromium): '
                                   'the board is measured in a headless browser')
REPO = Path(__file__).resolve().parents[1]
DEIT3_B_400 = 'configs/pretrain/deit3_base_in1k_400e.py'  # a paper config: its top-1 links to the paper's 83.1


@pytest.fixture(scope='module')
def wide(tmp_path_factory):
    """The wide board's runs, one ImageNet run linked to a paper row, and the table built from them."""
    root = tmp_path_factory.mktemp('wide')
    runs = make_wide_runs(root / 'runs', images=200)
    linked = record('pretrain', 'imagenet', dict(top1=82.6), recipe='supervised', epochs=400)
    linked.update(backbone='deit3_base_patch16_224', config=DEIT3_B_400, params_M=86.6, gflops=17.6)
    write(runs, 'linked/pretrain', linked)
    return root, build_table([str(runs)])


# Measures the page as a reader's window shows it, then scrolls the measured table's box to its far corner and
# measures again; the numbers go into the DOM as JSON, which --dump-dom prints.
MEASURE = r"""<script>
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                  bottom: r.bottom, height: r.height}; }
  var out = {innerWidth: window.innerWidth, docWidth: document.documentElement.scrollWidth, tables: []};
  document.querySelectorAll('details').forEach(function (d) { out.detailsOpen = out.detailsOpen || d.open; });
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });  // measure the folded ones too
  document.querySelectorAll('table').forEach(function (t) {
    var scroller = t.parentElement, style = getComputedStyle(scroller);
    out.tables.push({id: t.id, inScroll: scroller.classList.contains('scroll'), overflowX: style.overflowX,
                     tableWidth: t.scrollWidth, boxWidth: scroller.clientWidth, boxScrollWidth: scroller.scrollWidth,
                     boxRight: box(scroller).right});
  });
  var m = document.getElementById('measured'), s = m.parentElement;
  var names = Array.prototype.slice.call(m.tHead.rows[1].cells);
  out.names = names.map(function (th) { return th.textContent; });
  out.groups = Array.prototype.map.call(m.tHead.rows[0].cells, function (th) {
    return [th.textContent, th.colSpan]; });
  out.firstDownstream = box(names[5]);
  out.box = box(s);
  var fs = parseFloat(getComputedStyle(m.tBodies[0].rows[0].cells[5]).fontSize);
  out.fontSize = fs;
  out.rowHeights = Array.prototype.map.call(m.tBodies[0].rows, function (r) { return box(r).height; });
  out.ci = Array.prototype.map.call(m.querySelectorAll('td .ci'), function (ci) {
    var td = box(ci.parentElement), own = box(ci);
    return {below: own.top - td.top, height: own.height, size: parseFloat(getComputedStyle(ci).fontSize)};
  });
  s.style.maxHeight = '8em';  // a box shorter than its table: scroll it down and right
  s.scrollTop = s.scrollHeight; s.scrollLeft = s.scrollWidth;
  out.scrolled = {left: s.scrollLeft, top: s.scrollTop, box: box(s), header: box(m.tHead),
                  firstCell: box(m.tBodies[0].rows[3].cells[0]), lastHeader: box(names[names.length - 1])};
  document.body.setAttribute('data-measure', JSON.stringify(out));
})();
</script></body>"""


def _measure(page: Path, width: int, tmp_path: Path) -> dict:
    probe = page.with_name(f'measure{width}.html')
    probe.write_text(page.read_text().replace('</body>', MEASURE))
    result = subprocess.run(
        [BROWSER, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
         f'--user-data-dir={tmp_path / "profile"}', f'--window-size={width},900', '--virtual-time-budget=2000',
         '--dump-dom', probe.as_uri()], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    text = result.stdout.split('data-measure="', 1)[1].split('"', 1)[0]
    return json.loads(text.replace('&quot;', '"').replace('&amp;', '&').replace('&lt;', '<').replace('&gt;', '>'))


@pytest.fixture(scope='module')
def page(wide, tmp_path_factory):
    root, _ = wide
    path = tmp_path_factory.mktemp('page') / 'leaderboard.html'
    write_leaderboard([str(root / 'runs')], {'html': str(path)}, baseline='scratch')
    return path


@needs_browser
@pytest.mark.parametrize('width', [1280, 1920])
def test_the_downstream_columns_are_in_view_and_nothing_is_cut_off(page, tmp_path, width):
    m = _measure(page, width, tmp_path)
    # the page itself never scrolls sideways: every wide table scrolls in its own box, with a scroll bar
    assert m['docWidth'] <= m['innerWidth'], m
    for t in m['tables']:
        assert t['boxRight'] <= m['innerWidth'] + 1, t
        if t['tableWidth'] > t['boxWidth']:
            assert t['inScroll'] and t['overflowX'] == 'auto' and t['boxScrollWidth'] > t['boxWidth'], t
    assert all(t['inScroll'] for t in m['tables'] if t['id'] in ('measured', 'robustness', 'deltas', 'rank'))
    # downstream tasks first, a group each; ImageNet's own top-1 after them; robustness in its own, folded, table
    assert m['names'][:7] == ['backbone', 'pretraining', 'epochs', 'params (M)', 'GFLOPs', 'ADE20k-demo mIoU SS',
                              'ADE20k-demo mIoU MS']
    assert [g for g in m['groups'] if g[0]][:4] == [['Segmentation', 2], ['Detection', 2], ['Transfer', 2],
                                                    ['ImageNet', 1]]
    assert not m['detailsOpen'] and 'robustness' in {t['id'] for t in m['tables']}
    assert not any('(v2)' in name or 'mCE' in name for name in m['names'])
    # the first downstream column is in view without scrolling
    assert m['firstDownstream']['right'] <= min(m['box']['right'], m['innerWidth']), m['firstDownstream']
    # a number's interval: one line in smaller type under it; a row of the table two lines at most
    assert m['ci'] and all(c['below'] >= 0.8 * m['fontSize'] and c['size'] < m['fontSize'] and
                           c['height'] <= 1.5 * c['size'] * 1.3 for c in m['ci']), m['ci'][:3]
    assert max(m['rowHeights']) <= 3.2 * m['fontSize'], m['rowHeights']
    # scrolled to its far corner, the box keeps its header on top and its first column on the left
    s = m['scrolled']
    assert s['top'] > 0 and abs(s['header']['top'] - s['box']['top']) <= 2, s
    assert abs(s['firstCell']['left'] - s['box']['left']) <= 1, s
    assert s['lastHeader']['right'] <= s['box']['right'] + 1  # the last column is reached by scrolling
    if width == 1280:  # the demo-wide board is wider than 1280 px: there it scrolls
        assert s['left'] > 0


def test_intervals_go_on_a_second_line_or_into_the_tooltip(wide):
    _, table = wide
    line = render_html(table, [], plots=False, intervals='line')
    tip = render_html(table, [], plots=False, intervals='tooltip')
    cell = '<span class="ci">± 1.0 (n=2)</span>'  # ADE20k SS of vit_demo mae: seeds 0 and 1 at 29.2 +- 0.7
    assert '<span class="ci">' in line and '<span class="ci">' not in tip
    assert 'title="91.0 [88.0, 93.8]' not in line
    intervals_in_tips = [t for t in tip.split('title="')[1:] if ' (n=2)' in t.split('"')[0]]
    assert intervals_in_tips and cell not in tip
    with pytest.raises(ValueError, match="intervals='below'"):
        render_html(table, [], plots=False, intervals='below')


def test_robustness_and_calibration_columns_are_told_apart():
    groups, robust = column_groups([Column('cls', 'imagenet'), Column('cls', 'imagenet', 'v2'),
                                    Column('mce', 'imagenet'), Column('ece', 'imagenet'),
                                    Column('cls', 'imagenet', 'linear'), Column('transfer', 'cifar10'),
                                    Column('seg', 'ade20k')])
    assert [g.title for g in groups] == ['Segmentation', 'Transfer', 'ImageNet']
    assert [c.eval for c in groups[-1].columns] == ['ss', 'linear']  # a linear probe is no robustness test
    assert {(c.kind, c.eval) for c in robust} == {('cls', 'v2'), ('mce', 'ss'), ('ece', 'ss')}
    assert not is_robustness(Column('cls', 'imagenet', 'ss', '384'))


def _errorbar_spans(ax):
    """The (low, high) of each error bar drawn in ``ax``, in drawing order."""
    spans = []
    for container in ax.containers:
        lines = getattr(container, 'lines', None)  # an ErrorbarContainer (a bar's is in the list too)
        if lines:
            for segment in lines[2][0].get_segments():
                spans.append((round(float(segment[0][1]), 4), round(float(segment[1][1]), 4)))
    return spans


def test_every_bar_and_point_carries_its_interval(wide):
    _, table = wide
    columns = [c for c in table.columns if c.kind in ('box', 'mask')]
    fig = bars_figure(table, columns, 'AP', 'AP')
    expected = [(round(r.stats[c].ci95_low, 4), round(r.stats[c].ci95_high, 4)) for r in table.rows
                for c in columns if c in r.values]
    assert sorted(_errorbar_spans(fig.axes[0])) == sorted(expected) and len(expected) == 2 * 8
    fig, notes = pareto_figure(table)
    for ax in fig.axes:  # each panel: a point per row, each with the interval of its cell
        column = next(c for c in table.columns if c.label == ax.get_title())
        assert sorted(_errorbar_spans(ax)) == sorted(
            (round(r.stats[column].ci95_low, 4), round(r.stats[column].ci95_high, 4)) for r in table.rows
            if column in r.values and column in r.cell_hours)
        assert len(ax.lines) >= 2  # at least two points: a panel of one is left out
    # the 8 ImageNet columns: three runs at one device-hours figure (x has one value): no panel, said so
    assert len(fig.axes) == 6 and 'left out 8 column(s)' in notes[0] and 'ImageNet mCE' in notes[0]


def test_a_plot_whose_x_has_one_value_is_left_out_and_the_page_says_so(tmp_path):
    for recipe, miou in (('supervised', 30.0), ('mae', 28.0), ('scratch', 25.0)):
        write(tmp_path, recipe, record('seg', 'ade20k-demo', dict(mIoU=miou), recipe=recipe))  # all at 0.22 GFLOPs
    table = build_table([str(tmp_path)])
    plots, notes = measured_figures(table)
    assert 'Segmentation mIoU vs backbone GFLOPs' not in [title for title, _ in plots]
    assert notes == ['Segmentation mIoU vs backbone GFLOPs: not drawn, every row has the same GFLOPs (0.22): a '
                     'single x shows no trend (the values are in the table).']
    assert notes[0] in render('html', table, []).replace('&#x27;', "'")


def test_the_tidy_csv_round_trips_through_pandas_to_the_boards_cells(wide, tmp_path):
    pandas = pytest.importorskip('pandas', reason='pandas (the test extra: pip install -e .[test]) reads the tidy '
                                 'CSV as a user does')
    root, table = wide
    wide_csv = tmp_path / 'board.csv'
    write_leaderboard([str(root / 'runs')], {'csv': str(wide_csv)})
    frame = pandas.read_csv(tidy_path(str(wide_csv)))  # as it is: no options, no cleaning
    assert tuple(frame.columns) == FIELDS and tidy_path(str(wide_csv)).endswith('board.tidy.csv')
    for name in ('value', 'std', 'ci95_low', 'ci95_high', 'n', 'paper_value', 'paper_delta', 'epochs'):
        assert frame[name].dtype.kind == 'f' or frame[name].dtype.kind == 'i', (name, frame[name].dtype)
    assert frame['lower_is_better'].dtype == bool and frame['best'].dtype == bool
    measured = frame[frame['source'] == 'measured']
    cells = [(row, column) for row in table.rows for column in table.columns if column in row.cells]
    assert len(measured) == len(cells)
    for (row, column), (_, line) in zip(cells, measured.iterrows()):
        summary = row.stats[column]
        assert (line['backbone'], line['recipe'], line['epochs'], line['column']) == (
            row.backbone, row.recipe, row.epochs, column.label)
        assert line['value'] == pytest.approx(row.values[column], abs=1e-6)
        assert line['n'] == summary.n and bool(line['best']) == table.is_best(row, column)
        if summary.ci95_low is None:
            assert np.isnan(line['ci95_low']) and np.isnan(line['ci95_high'])
        else:
            assert (line['ci95_low'], line['ci95_high']) == (pytest.approx(summary.ci95_low, abs=1e-6),
                                                             pytest.approx(summary.ci95_high, abs=1e-6))
            assert line['interval_over'] == summary.interval
    linked = measured[measured['paper_value'].notna()]
    assert linked[['backbone', 'column', 'value', 'paper_value', 'paper_delta']].values.tolist() == [
        ['deit3_base_patch16_224', 'ImageNet top-1', 82.6, 83.1, -0.5]]
    assert 'deit3_table6_15' in linked['paper_source'].iloc[0]
    # the paper tables' cells follow, apart: as many as the paper tables have numbers
    paper = frame[frame['source'] != 'measured']
    # board.yaml's tables, and the map's others only where a cell of this board links to them
    assert len(paper) == sum(1 for t in shown_tables(table, load_paper_tables()) for r in t.rows for c in t.columns
                             if c in r.cells and r.cells[c].value is not None)
    assert paper['source'].str.startswith('paper: ').all() and paper['n'].isna().sum() == 0


def test_the_tidy_csv_is_one_line_per_cell_without_pandas(wide):
    """The same file read by the standard library: one header, every line as long, numbers that parse."""
    _, table = wide
    lines = list(csv.reader(io.StringIO(render('tidy', table, []))))
    assert tuple(lines[0]) == FIELDS and {len(line) for line in lines} == {len(FIELDS)}
    assert len(lines) - 1 == sum(len(r.cells) for r in table.rows)
    index = FIELDS.index('value')
    assert all(float(line[index]) >= 0 for line in lines[1:])


def test_the_tool_writes_the_tidy_csv_beside_the_wide_one_and_takes_the_intervals_option(runs, tmp_path):
    main = runpy.run_path(str(REPO / 'tools' / 'leaderboard.py'))['main']
    assert main([str(runs), '--no-paper', '--out', str(tmp_path / 'board.csv')]) == 0
    assert (tmp_path / 'board.csv').read_text().startswith('section,backbone,')
    assert (tmp_path / 'board.tidy.csv').read_text().startswith(','.join(FIELDS) + '\n')
    assert main([str(runs), '--no-paper', '--out', str(tmp_path / 'alone.tidy.csv')]) == 0
    assert (tmp_path / 'alone.tidy.csv').read_text() == (tmp_path / 'board.tidy.csv').read_text()
    assert not (tmp_path / 'alone.csv').exists()
    assert main([str(runs), '--no-paper', '--intervals', 'tooltip', '--out', str(tmp_path / 'b.html')]) == 0
    assert '<td class="num"' in (tmp_path / 'b.html').read_text() and 'class="ci"' not in (
        tmp_path / 'b.html').read_text()


HOSTILE = 'vit\u202eevil\u200f_<script>alert(1)</script>[x](javascript:alert(1))\x1b[2J'


def test_control_and_bidi_characters_are_neutralised_in_every_output(tmp_path, capsys):
    """A backbone named with a right-to-left override, a terminal escape and raw HTML: every format shows it as
    visible text; Markdown passes no HTML and no link."""
    main = runpy.run_path(str(REPO / 'tools' / 'leaderboard.py'))['main']
    rec = record('seg', 'ade20k-demo', dict(mIoU=30.0))
    rec['backbone'] = HOSTILE
    write(tmp_path / 'runs', 'a', rec)
    write(tmp_path / 'runs', 'b', dict(rec, metrics=dict(mIoU=31.0), created='2026-02-01T00:00:00+00:00'))
    table = build_table([str(tmp_path / 'runs')])
    hidden = ('\u202e', '\u200f', '\x1b')
    for fmt in ('md', 'csv', 'tidy', 'html'):
        text = render(fmt, table, [])
        assert not any(c in text for c in hidden), fmt
        assert 'vit⟨U+202E⟩evil⟨U+200F⟩_' in text and '⟨U+001B⟩[2J' in text, fmt
    md = render('md', table, [])
    assert '<script' not in md.lower() and '&lt;script>alert(1)&lt;/script>' in md and '](javascript' not in md
    page = render_html(table, [], plots=False)
    assert '<script>alert' not in page and '&lt;script&gt;alert(1)&lt;/script&gt;' in page
    # the terminal: the conflict of the two runs is a warning line naming the backbone
    assert main([str(tmp_path / 'runs'), '--no-paper']) == 0
    out, err = capsys.readouterr()
    assert 'conflicting runs' in err and not any(c in out + err for c in hidden)
    assert 'vit⟨U+202E⟩evil' in err
