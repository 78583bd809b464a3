"""The paper reference tables of the leaderboard: those ``vitbench/results/papers/board.yaml`` names, read from
their one home in the map of the papers (``vitbench/results/papers/<document>.yaml``, :mod:`.paper_map`).

Each source table of the papers becomes one :class:`~vitbench.results.table.Table` with the same column kinds
as the measured table, so the two read alike; they are rendered in their own section and never merged.

A row may name the configs that reproduce it (``config``: one path or a list, as ``configs/<folder>/<name>.py``),
with its ``variant``, ``recipe`` (the measured rows' pre-training label: supervised, mae, ...) and ``epochs``
(of the pre-training); :mod:`vitbench.results.reproduction` then sets the measured cells of those runs beside
it. A table (or a row) names the downstream ``protocol`` it was measured under (``configs/_base_/protocols/``); a
measured cell links to it only when its runs recorded that protocol. In the map of the papers a row's ``run``
(a config with ``cfg_options``) is linked as well: :func:`vitbench.results.paper_map.link_targets` writes it as a
``config`` with its options, and it links only to runs made with those options. Rows of one table that name the
same config, variant, recipe, epochs and protocol are one experiment: they must agree; two tables may each print
their own number for it, and each links its own. A row fine-tuned
at another resolution than its variant's own (the papers' ↑384) says so with ``img_size`` (e.g. 384): it then links
to the measured "↑384" cells (:attr:`~vitbench.results.table.Column.res`), not to the variant-resolution ones. On a
downstream row ``img_size`` is the resolution of the ImageNet fine-tune its backbone comes from (thesis Table 6.12's
"pre-trained at 384"; its ``recipe`` ends in "↑384", as the measured rows' labels do).
"""
import math
import os.path as osp
from typing import Dict, List, Optional

from vitbench.yaml_file import read_yaml

from .experiment import split_target
from .paper_map import PAPERS, board_specs, linkable_specs
from .schema import kinds, resolution_kinds
from .table import Cell, Column, LeaderboardError, Row, Table, res_label, sorted_columns

PAPER_RESULTS = osp.join(PAPERS, 'board.yaml')
_ROW_KEYS = ('model', 'variant', 'pretrain', 'epochs', 'params_M', 'gflops', 'note', 'config', 'recipe', 'img_size',
             'protocol')
_TABLE_KEYS = ('id', 'source', 'note', 'protocol', 'rows')


def parse_column(key: str) -> Optional[Column]:
    """'seg/ade20k/ms' → Column('seg', 'ade20k', 'ms'); 'transfer/cars' → Column('transfer', 'cars')."""
    parts = key.split('/')
    if len(parts) not in (2, 3) or parts[0] not in kinds() or not all(parts):
        return None
    return Column(*parts)


def load_paper_tables(path: str = PAPER_RESULTS) -> List[Table]:
    """The tables a board file names (``board``: ids of the map's tables next to it, always shown), then every other
    table of the map with a runnable row (``on_demand``: shown only where a measured cell links to it,
    :func:`vitbench.results.reproduction.shown_tables`); or the tables a file lists itself (``tables``: a list of
    tables with id, source, rows)."""
    data = read_yaml(path, LeaderboardError)
    on_demand = set()
    if isinstance(data, dict) and isinstance(data.get('board'), list):
        specs = board_specs(data['board'], osp.dirname(osp.abspath(path)))
        others = linkable_specs(data['board'], osp.dirname(osp.abspath(path)))
        on_demand = {s['id'] for s in others}
        specs += others
    elif isinstance(data, dict) and isinstance(data.get('tables'), list):
        specs = data['tables']
    else:
        raise LeaderboardError(f"{path}: missing key 'tables' (a list of tables with id, source, rows) or 'board' "
                               '(ids of the tables of vitbench/results/papers/)')
    tables, ids = [], set()
    for t, spec in enumerate(specs):
        where = f'{path}: tables[{t}]'
        if not isinstance(spec, dict):
            raise LeaderboardError(f'{where}: expected a mapping with keys {_TABLE_KEYS}')
        unknown = set(spec) - set(_TABLE_KEYS)
        if unknown:
            raise LeaderboardError(f'{where}: unknown key(s) {sorted(unknown)}; expected {_TABLE_KEYS}')
        for key in ('id', 'source'):
            if not isinstance(spec.get(key), str):
                raise LeaderboardError(f"{where}: missing key '{key}' (a string)")
        if spec['id'] in ids:
            raise LeaderboardError(f"{where}: id {spec['id']!r} is used twice")
        ids.add(spec['id'])
        where = f"{path}: table '{spec['id']}'"
        if not isinstance(spec.get('rows'), list) or not spec['rows']:
            raise LeaderboardError(f"{where}: missing key 'rows' (a non-empty list)")
        protocol = _protocol(spec.get('protocol'), where)
        rows = [_row(r, f'{where} rows[{i}]', protocol) for i, r in enumerate(spec['rows'])]
        tables.append(Table(rows, sorted_columns(c for r in rows for c in r.values), title=spec['source'],
                            note=(spec.get('note') or '').strip(), id=spec['id'], on_demand=spec['id'] in on_demand))
    _check_links(path, tables)
    return tables


def _check_links(path: str, tables: List[Table]) -> None:
    """Two rows of one table that name the same experiment (config with its options, variant, recipe, epochs,
    protocol) must not report different values. Two tables may: each links its own number (thesis Table 6.11 and
    "Three things" Table 6 print different numbers for the same ViT-S transfers; a measured cell is set beside
    both, each named with its table, :mod:`vitbench.results.reproduction`)."""
    for table in tables:
        seen = {}
        for row in table.rows:
            for config in row.configs:
                for column, value in row.values.items():
                    key = (config, row.variant, row.link_recipe, row.epochs, link_column(row, column),
                           cell_protocol(row, column))
                    if key in seen and abs(seen[key][0] - value) > 1e-9:
                        other_value, other = seen[key]
                        raise LeaderboardError(
                            f"{path}: table '{table.id}': {config} ({row.variant}, {row.link_recipe}, {row.epochs} "
                            f'epochs), {column.label}: row {other!r} reports {other_value}, row {row.backbone!r} '
                            f'{value}; one experiment, one number per table: link the config to one of them')
                    seen.setdefault(key, (value, row.backbone))


def cell_protocol(row: Row, column: Column) -> str:
    """The downstream protocol a paper row's ``column`` was measured under ('' : none named)."""
    return row.protocol.get(column.kind, row.protocol.get('*', ''))


def _protocol(value, where: str) -> Dict[str, str]:
    """A table's or row's ``protocol``: one name for every column, or a mapping {column kind: name}."""
    if value is None:
        return {}
    if isinstance(value, str) and value:
        return {'*': value}
    if isinstance(value, dict) and value and all(k in kinds() and isinstance(v, str) and v for k, v in value.items()):
        return dict(value)
    raise LeaderboardError(f"{where}: key 'protocol' is {value!r}, expected a protocol name (configs/_base_/protocols/"
                           "<name>.py, e.g. 'upernet_xcit160k') or a mapping {column kind: name} with kinds in "
                           f'{tuple(kinds())}')


def link_column(row: Row, column: Column) -> Column:
    """The measured column a paper row's ``column`` is: at the row's fine-tuning resolution for the resolution kinds
    (:func:`~vitbench.results.schema.resolution_kinds`: the fine-tuning tasks' top-1, mCE, ECE), as a measured
    fine-tune fills them (the paper prints a ↑384 row's top-1 under its plain top-1 column); a plain transfer column
    (``transfer/cars``) is the full fine-tune's, which a transfer run records as its eval ``full`` (its attention /
    FFN-only fine-tunes: ``transfer/cars/attention``, ``/ffn``)."""
    if column.kind == 'transfer' and column.eval == 'ss':
        column = Column(column.kind, column.dataset, 'full', column.res, column.protocol, column.setting)
    return column.at(row.res) if column.kind in resolution_kinds() else column


def _row(spec, where: str, protocol: Dict[str, str]) -> Row:
    if not isinstance(spec, dict):
        raise LeaderboardError(f'{where}: expected a mapping')
    if not isinstance(spec.get('model'), str):
        raise LeaderboardError(f"{where}: missing key 'model' (the paper's model name)")
    where = f"{where} ({spec['model']})"
    values = {}
    for key, value in spec.items():
        if key in _ROW_KEYS:
            continue
        column = parse_column(key)
        if column is None:
            raise LeaderboardError(f"{where}: unknown key {key!r}; expected one of {_ROW_KEYS} or a measurement "
                                   f"KIND/DATASET[/EVAL] with KIND in {tuple(kinds())}, e.g. 'seg/ade20k/ss'")
        if not _finite(value):
            raise LeaderboardError(f'{where}: key {key!r} is {value!r}, expected a number (leave out unknown values)')
        values[column] = float(value)
    for key in ('params_M', 'gflops'):
        if spec.get(key) is not None and not _finite(spec[key]):
            raise LeaderboardError(f'{where}: key {key!r} is {spec[key]!r}, expected a number')
    if spec.get('epochs') is not None and not isinstance(spec['epochs'], int):
        raise LeaderboardError(f"{where}: key 'epochs' is {spec['epochs']!r}, expected an integer")
    img_size = spec.get('img_size')
    if img_size is not None and not (isinstance(img_size, int) and not isinstance(img_size, bool) and img_size > 0):
        raise LeaderboardError(f"{where}: key 'img_size' is {img_size!r}, expected the resolution in pixels the row "
                               "was fine-tuned at when it is not the variant's own (e.g. 384 for a ↑384 row)")
    configs = _configs(spec, where)
    model = spec['model'] + (f" ({spec['variant']})" if spec.get('variant') else '')
    return Row(model, str(spec.get('pretrain') or ''), spec.get('epochs'), params_M=spec.get('params_M'),
               gflops=spec.get('gflops'), cells={c: Cell(v) for c, v in values.items()},
               note=str(spec.get('note') or ''),
               variant=str(spec.get('variant') or ''), configs=configs, link_recipe=str(spec.get('recipe') or ''),
               res='' if img_size is None else res_label(img_size),
               protocol=_protocol(spec['protocol'], where) if 'protocol' in spec else protocol)


def _configs(spec: dict, where: str) -> tuple:
    """The row's ``config``: one path or a list, each 'configs/<folder>/<name>.py'; a linked row needs its variant,
    recipe and epochs (what a measured row must match besides the config)."""
    configs = spec.get('config')
    if configs is None:
        return ()
    configs = [configs] if isinstance(configs, str) else configs
    if not isinstance(configs, list) or not configs or not all(isinstance(c, str) and _config_path(c) for c in configs):
        raise LeaderboardError(f"{where}: key 'config' is {spec['config']!r}, expected a config path "
                               "'configs/<folder>/<name>.py' or a list of them (in the map of the papers, a "
                               "``run`` with cfg_options adds one with its options)")
    for key in ('variant', 'recipe', 'epochs'):
        if spec.get(key) is None:
            raise LeaderboardError(f"{where}: a row with 'config' needs '{key}' (a measured row must match it)")
    return tuple(configs)


def _config_path(target: str) -> bool:
    """A link target (:func:`vitbench.results.experiment.link_target`) of a config path with its options."""
    try:
        config = split_target(target)[0]
    except ValueError:
        return False
    return config.startswith('configs/') and config.endswith('.py')


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
