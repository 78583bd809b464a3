"""The HTML leaderboard sorts and filters in a browser: its script runs in headless Chromium on a page that
tools/leaderboard.py writes, with the state in the URL fragment, and the dumped DOM shows the rows' order and
which are hidden. Skipped without Chromium (Debian package `chromium`)."""
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from vitbench.results.render import write_leaderboard

REPO = Path(__file__).resolve().parents[1]
DEIT3_B_400 = 'configs/pretrain/deit3_base_in1k_400e.py'  # a paper config: its cell shows the paper's 83.1 and Δ
BROWSER = next((shutil.which(name) for name in ('chromium', 'chromium-browser') if shutil.which(name)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason='chromium is not installed (Debian package chromium): '
                                   "the leaderboard page's sorting and filtering run in a headless browser")
IMAGENET, CIFAR = 'ImageNet top-1', 'CIFAR-10 top-1'


def record(config, metrics, backbone, recipe, epochs, task='pretrain', dataset='imagenet', seed=0):
    return dict(task=task, dataset=dataset, backbone=backbone, backbone_overrides={},
                pretrain=dict(recipe=recipe, epochs=epochs, checkpoint=None), metrics=metrics, eval='ss',
                params_M=86.6, gflops=17.6, seed=seed, config=config, git_commit='abc',
                created='2026-01-01T00:00:00+00:00')


@pytest.fixture(scope='module')
def page(tmp_path_factory) -> Path:
    """ImageNet top-1 cells of every kind: with the paper's number and Δ, over seeds (mean ± std), plain, and
    empty (the transfer rows); transfer rows whose paired Δ against scratch are of both signs (two negative: as
    text, '-1.0' would come before '-5.0')."""
    root = tmp_path_factory.mktemp('board')
    runs = [('linked', record(DEIT3_B_400, dict(top1=82.6), 'deit3_base_patch16_224', 'supervised', 400)),
            ('short', record(DEIT3_B_400, dict(top1=3.0), 'deit3_base_patch16_224', 'supervised', 1))]
    runs += [(f'seeded{s}', record(DEIT3_B_400, dict(top1=79.0 + s), 'deit3_small_patch16_224', 'supervised', 400,
                                   seed=s)) for s in range(3)]
    for recipe, epochs, top1 in (('scratch', 0, 50.0), ('supervised', 6, 60.0), ('mae', 6, 45.0), ('dmae', 6, 49.0)):
        runs += [(f'{recipe}{s}', record('configs/demo/transfer_cifar10_demo.py', dict(top1=top1 + 2 * s),
                                         'vit_demo_patch8_64', recipe, epochs, 'transfer', 'cifar10', seed=s))
                 for s in range(2)]
    for name, rec in runs:
        (root / 'runs' / name).mkdir(parents=True)
        (root / 'runs' / name / 'result.json').write_text(json.dumps(rec))
    path = root / 'leaderboard.html'
    write_leaderboard([str(root / 'runs')], {'html': str(path)}, baseline='scratch')
    return path


class Tables(HTMLParser):
    """Each table of a page by id: its header cells (text, aria-sort: the header's last line, the column names under
    the line of group titles) and its body rows (cell texts, hidden)."""

    def __init__(self, text: str):
        super().__init__()
        self.tables, self._table, self._cell = {}, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == 'table':
            self._table = self.tables.setdefault(attrs.get('id'), dict(head=[], rows=[]))
        elif tag == 'tr' and self._table is not None:
            self._row = dict(cells=[], hidden='hidden' in attrs)
            if attrs.get('class') == 'groups':
                self._row['groups'] = True
        elif tag in ('th', 'td') and self._table is not None:
            self._cell, self._sort = [], attrs.get('aria-sort')

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ('th', 'td') and self._cell is not None:
            text = ''.join(self._cell).strip()
            if tag == 'th':
                if not self._row.get('groups'):
                    self._table['head'].append((text, self._sort))
            else:
                self._row['cells'].append(text)
            self._cell = None
        elif tag == 'tr' and self._table is not None and self._row['cells']:
            self._table['rows'].append(self._row)
        elif tag == 'table':
            self._table = None


def in_browser(page: Path, fragment: str, tmp_path: Path) -> Tables:
    """The page's DOM after its script ran, opened at ``page#fragment``."""
    result = subprocess.run(
        [BROWSER, '--headless', '--no-sandbox', '--disable-gpu', f'--user-data-dir={tmp_path / "profile"}',
         '--virtual-time-budget=2000', '--dump-dom', f'{page.as_uri()}#{fragment}'],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and '</table>' in result.stdout, result.stderr[-2000:]
    return Tables(result.stdout)


def column(table: dict, name: str) -> list:
    index = [text for text, _ in table['head']].index(name)
    return [row['cells'][index] for row in table['rows']]


@needs_browser
@pytest.mark.parametrize('direction', ['asc', 'desc'])
def test_a_fragment_sorts_by_the_leading_number_with_empty_cells_last(page, tmp_path, direction):
    tables = in_browser(page, f'sort=imagenet+top-1&dir={direction}', tmp_path)  # header text, any case
    measured = tables.tables['measured']
    values = ['3.0', '80.0 ± 1.0 (n=3)', '82.6 (paper 83.1, Δ -0.5)']
    assert column(measured, IMAGENET) == (values if direction == 'asc' else values[::-1]) + [''] * 4
    assert dict(measured['head'])[IMAGENET] == ('ascending' if direction == 'asc' else 'descending')
    # empty cells keep the page's order among themselves
    assert column(measured, 'pretraining')[3:] == ['supervised', 'mae', 'dmae', 'scratch']
    assert not any(row['hidden'] for row in measured['rows'])


@needs_browser
def test_signed_numbers_sort_as_numbers_in_another_table(page, tmp_path):
    tables = in_browser(page, f'table=deltas&sort=%CE%94+{CIFAR.replace(" ", "+")}', tmp_path)
    deltas = tables.tables['deltas']
    assert [cell.split(' ')[0] for cell in column(deltas, f'Δ {CIFAR}')] == ['-5.0', '-1.0', '+10.0']
    assert column(deltas, 'pretraining') == ['mae', 'dmae', 'supervised']
    assert column(tables.tables['measured'], 'pretraining')[0] == 'supervised'  # the others stay as they were


@needs_browser
def test_the_cross_task_rank_sorts_too(page, tmp_path):
    """The rank table (CIFAR-10 over the four transfer rows, their two seeds resampled) by its mean z, ascending:
    the reverse of the rank it was written in."""
    rank = in_browser(page, 'table=rank&sort=mean+z+%5B95+%25%5D&dir=asc', tmp_path).tables['rank']
    assert column(rank, 'pretraining') == ['mae', 'dmae', 'scratch', 'supervised']
    assert column(rank, 'rank') == ['4', '3', '2', '1']


@needs_browser
@pytest.mark.parametrize('needle', ['MAE', 'vit-B'])  # 'vit-B' is only in paper rows, written 'ViT-B'
def test_a_fragment_filters_the_rows_of_every_table_case_insensitively(page, tmp_path, needle):
    tables = in_browser(page, f'filter={needle}', tmp_path).tables
    rows = [row for table in tables.values() for row in table['rows']]
    assert all(row['hidden'] == (needle.lower() not in ' '.join(row['cells']).lower()) for row in rows)
    assert any(row['hidden'] for row in rows) and not all(row['hidden'] for row in rows)
    if needle == 'MAE':
        assert [row['cells'][1] for row in tables['measured']['rows'] if not row['hidden']] == ['mae', 'dmae']

def test_the_page_stands_alone(page):
    text = page.read_text()
    assert '<script>' in text and 'id="table-filter"' in text and 'id="measured"' in text
    assert 'src="http' not in text and 'href="http' not in text and '<script src' not in text



@needs_browser
def test_clicks_and_typing_sort_filter_and_write_the_fragment(page, tmp_path):
    """A page that frames the leaderboard clicks a header twice and types into the box, as a reader would, then
    copies the frame's fragment and tables into its own DOM for --dump-dom."""
    driver = page.parent / 'driver.html'
    driver.write_text(f'''<!DOCTYPE html><html><body><iframe id="board" src="{page.name}"></iframe><script>
document.getElementById('board').addEventListener('load', function () {{
  var win = this.contentWindow, doc = win.document;
  var th = Array.from(doc.querySelectorAll('#measured th')).find(function (h) {{
    return h.textContent === '{IMAGENET}';
  }});
  th.click(); th.click();
  var box = doc.getElementById('table-filter');
  box.value = 'Supervised'; box.dispatchEvent(new Event('input'));
  document.body.setAttribute('data-fragment', decodeURIComponent(win.location.hash.replace(/\\+/g, ' ')));
  document.body.appendChild(doc.getElementById('measured').cloneNode(true));
}});
</script></body></html>''')
    result = subprocess.run(
        [BROWSER, '--headless', '--no-sandbox', '--disable-gpu', '--allow-file-access-from-files',
         f'--user-data-dir={tmp_path / "profile"}', '--virtual-time-budget=3000', '--dump-dom', driver.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f'data-fragment="#sort={IMAGENET}&amp;dir=desc&amp;filter=Supervised"' in result.stdout
    measured = Tables(result.stdout).tables['measured']
    assert column(measured, IMAGENET)[:3] == ['82.6 (paper 83.1, Δ -0.5)', '80.0 ± 1.0 (n=3)', '3.0']
    assert dict(measured['head'])[IMAGENET] == 'descending'
    assert [row['hidden'] for row in measured['rows']] == [row['cells'][1] != 'supervised' for row in measured['rows']]
