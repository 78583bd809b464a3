"""What the leaderboard shows of a ``tools/benchmark.py --json`` record: the measured ratios beside the paper's.

A paper table whose numbers are throughput or memory (thesis Table 3.1, "Three things" Table 4, Figure 4's
fine-tuning costs) is rerun by ``tools/benchmark.py`` rather than by a training; ``tools/pipeline.py --table`` runs
it as a stage that writes ``benchmark.json`` (``{"machine": {...}, "rows": [...], "ratios": {name: value}}``),
and the leaderboard stage lists its ratios, each beside the paper's where the record holds one (a ratio ``NAME``
and its paper value ``NAME/paper``). Absolute images/s depend on the hardware, so the board shows ratios between
models (or implementations) measured side by side in one process, never a paper's images/s beside this
machine's. ``NAME/median`` (the ratio of median rounds) is shown beside the fastest rounds' ratio.
"""
import json
import numbers
from dataclasses import dataclass
from typing import List, Optional, Sequence

from .result_file import LeaderboardError

TITLE = 'Speed and memory, measured by tools/benchmark.py (ratios)'
INTRO = ("Absolute images/s and MB depend on the hardware (the paper's GPU is not this one): each line is a ratio "
         'of two measurements taken side by side in one process (fastest rounds; the median rounds\' in brackets), '
         "beside the paper's ratio of the same two where it prints one.")


@dataclass(frozen=True)
class BenchmarkRecord:
    path: str
    device: str  # the machine in words: the device's name, its threads and clock
    ratios: dict


@dataclass(frozen=True)
class RatioLine:
    name: str
    measured: float
    median: Optional[float]
    paper: Optional[float]


def read_benchmark(path: str) -> BenchmarkRecord:
    """A ``tools/benchmark.py --json`` file; a file that is not one is refused naming it and the key."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise LeaderboardError(f'{path}: not a readable tools/benchmark.py --json record ({e})') from None
    if not isinstance(data, dict) or not isinstance(data.get('ratios'), dict) or not isinstance(
            data.get('machine'), dict):
        raise LeaderboardError(f"{path}: expected keys 'machine' (a mapping) and 'ratios' ({{name: number}}), as "
                               'tools/benchmark.py --json writes them')
    bad = [k for k, v in data['ratios'].items() if not isinstance(v, numbers.Real) or isinstance(v, bool)]
    if bad:
        raise LeaderboardError(f"{path}: 'ratios' {bad[:3]} are not numbers")
    machine = data['machine']
    device = ', '.join(str(x) for x in (machine.get('device_name') or machine.get('device'),
                                        machine.get('torch_threads') and
                                        f"{machine['torch_threads']} thread{'s' * (machine['torch_threads'] != 1)}",
                                        machine.get('clock') and f"{machine['clock']} clock",
                                        machine.get('date')) if x)
    return BenchmarkRecord(path, device or 'unknown device', dict(data['ratios']))


def ratio_lines(record: BenchmarkRecord) -> List[RatioLine]:
    """Every ratio of the record (not its ``/paper`` or ``/median`` companions), in the record's order."""
    r = record.ratios
    return [RatioLine(k, v, r.get(f'{k}/median'), r.get(f'{k}/paper')) for k, v in r.items()
            if not k.endswith(('/paper', '/median'))]


def _fmt(value: Optional[float]) -> str:
    return '-' if value is None else f'{value:.2f}'


def _rows(record: BenchmarkRecord) -> List[List[str]]:
    return [[line.name, _fmt(line.measured) + (f' ({_fmt(line.median)})' if line.median is not None else ''),
             _fmt(line.paper)] for line in ratio_lines(record)]


HEAD = ['ratio', 'measured (median)', 'paper']


def markdown_lines(records: Sequence[BenchmarkRecord], code) -> List[str]:
    """The section in Markdown (``code``: how the page writes a path)."""
    out = [f'## {TITLE}', '', INTRO]
    for record in records:
        out += ['', f'{code(record.path)}: {record.device}', '', '| ' + ' | '.join(HEAD) + ' |', '|---|---:|---:|']
        out += ['| ' + ' | '.join(cells) + ' |' for cells in _rows(record)]
    return out


def html_section(records: Sequence[BenchmarkRecord]) -> str:
    import html
    e = html.escape
    parts = [f'<h2>{e(TITLE)}</h2><p>{e(INTRO)}</p>']
    for record in records:
        parts.append(f'<p><code>{e(record.path)}</code>: {e(record.device)}</p><table class="benchmark"><thead><tr>'
                     + ''.join(f'<th>{e(h)}</th>' for h in HEAD) + '</tr></thead><tbody>')
        parts += ['<tr>' + ''.join(f'<td>{e(c)}</td>' for c in cells) + '</tr>' for cells in _rows(record)]
        parts.append('</tbody></table>')
    return ''.join(parts)
