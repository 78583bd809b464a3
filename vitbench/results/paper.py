"""The paper reference tables of the leaderboard, read from ``vitbench/results/paper_results.yaml``.

Each source table of the papers becomes one :class:`~vitbench.results.table.Table` with the same column kinds
as the measured table, so the two read alike; they are rendered in their own section and never merged.
"""
import math
import os.path as osp
from typing import List, Optional

import yaml

from .schema import KINDS
from .table import Column, LeaderboardError, Row, Table, sorted_columns

PAPER_RESULTS = osp.join(osp.dirname(osp.abspath(__file__)), 'paper_results.yaml')
_ROW_KEYS = ('model', 'variant', 'pretrain', 'epochs', 'params_M', 'gflops', 'note')
_TABLE_KEYS = ('id', 'source', 'note', 'rows')


def parse_column(key: str) -> Optional[Column]:
    """'seg/ade20k/ms' → Column('seg', 'ade20k', 'ms'); 'transfer/cars' → Column('transfer', 'cars')."""
    parts = key.split('/')
    if len(parts) not in (2, 3) or parts[0] not in KINDS or not all(parts):
        return None
    return Column(*parts)


def load_paper_tables(path: str = PAPER_RESULTS) -> List[Table]:
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise LeaderboardError(f'{path}: cannot be read: {e.strerror or e}') from e
    except yaml.YAMLError as e:
        raise LeaderboardError(f'{path}: not valid YAML: {e}') from e
    if not isinstance(data, dict) or not isinstance(data.get('tables'), list):
        raise LeaderboardError(f"{path}: missing key 'tables' (a list of tables with id, source, rows)")
    tables, ids = [], set()
    for t, spec in enumerate(data['tables']):
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
        rows = [_row(r, f'{where} rows[{i}]') for i, r in enumerate(spec['rows'])]
        tables.append(Table(rows, sorted_columns(c for r in rows for c in r.values), title=spec['source'],
                            note=(spec.get('note') or '').strip(), id=spec['id']))
    return tables


def _row(spec, where: str) -> Row:
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
                                   f"KIND/DATASET[/EVAL] with KIND in {KINDS}, e.g. 'seg/ade20k/ss'")
        if not _finite(value):
            raise LeaderboardError(f'{where}: key {key!r} is {value!r}, expected a number (leave out unknown values)')
        values[column] = float(value)
    for key in ('params_M', 'gflops'):
        if spec.get(key) is not None and not _finite(spec[key]):
            raise LeaderboardError(f'{where}: key {key!r} is {spec[key]!r}, expected a number')
    if spec.get('epochs') is not None and not isinstance(spec['epochs'], int):
        raise LeaderboardError(f"{where}: key 'epochs' is {spec['epochs']!r}, expected an integer")
    model = spec['model'] + (f" ({spec['variant']})" if spec.get('variant') else '')
    return Row(model, str(spec.get('pretrain') or ''), spec.get('epochs'), params_M=spec.get('params_M'),
               gflops=spec.get('gflops'), values=values, note=str(spec.get('note') or ''))


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
