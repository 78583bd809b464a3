"""The throughput and peak memory a paper table prints, as its map rows record them in their note ("1891 im/s,
peak 987 MB": thesis Tables 3.5, 4.1, 5.x, 6.7, 6.8), and the ratios between its rows that a measurement on another
GPU should reproduce (absolute images/s depend on the GPU; ratios between models should hold).

``tools/benchmark.py paper --paper-table thesis:6.7`` measures the same models at the table's batch and precision
and prints its ratios beside these (torch-free here: only the map is read)."""
import re
from dataclasses import dataclass
from typing import List, Optional

from .paper_map import load_map
from .result_file import LeaderboardError

_IMAGES_PER_S = re.compile(r'(\d+(?:\.\d+)?) im/s')
_PEAK_MB = re.compile(r'peak (\d+(?:\.\d+)?) MB')


@dataclass(frozen=True)
class PaperSpeed:
    """One row of a table that states its speed: the model as the paper names it, the suite's variant, the
    resolution it runs at, the printed images/s and peak memory (MB; None where not printed)."""
    model: str
    variant: str
    img_size: int
    images_per_s: float
    peak_mem_MB: Optional[float] = None


def speed_of(note: str):
    """(images/s, peak MB) a row's note states, or None without an 'im/s' figure."""
    ips = _IMAGES_PER_S.search(note or '')
    if not ips:
        return None
    peak = _PEAK_MB.search(note)
    return float(ips.group(1)), float(peak.group(1)) if peak else None


def paper_speeds(table_key: str, folder: Optional[str] = None) -> List[PaperSpeed]:
    """The rows of map entry ``table_key`` ('thesis:6.7') that name a variant and state a speed, each once (the
    first row of a model), in table order."""
    tables = {t.key: t for t in (load_map(folder) if folder else load_map())}
    if table_key not in tables:
        raise LeaderboardError(f'--paper-table {table_key!r}: no such table in the map of the papers '
                               f'(DOCUMENT:NUMBER as docs/coverage.md lists them, e.g. thesis:6.7)')
    return speeds_of_rows(table_key, tables[table_key].rows)


def speeds_of_rows(table_key: str, rows: List[dict]) -> List[PaperSpeed]:
    """:func:`paper_speeds` of a map entry's rows, already read."""
    out, seen = [], set()
    for row in rows:
        speed = speed_of(str(row.get('note') or ''))
        if speed is None or not row.get('variant') or row['model'] in seen:
            continue
        seen.add(row['model'])
        size = row.get('img_size') or int(re.search(r'_(\d+)$', row['variant']).group(1))
        out.append(PaperSpeed(row['model'], row['variant'], int(size), *speed))
    if not out:
        raise LeaderboardError(f'--paper-table {table_key}: no row names a variant and a throughput ("N im/s" in '
                               'its note)')
    return out


def ratios(values: dict, reference: str) -> dict:
    """Each value over the reference's ({model: value} -> {model: value / values[reference]})."""
    return {model: value / values[reference] for model, value in values.items()
            if value is not None and values.get(reference)}
