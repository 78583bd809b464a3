"""Reported vs reproduced: the measured cells that are the same experiment as a paper row, with the paper's
number and Δ = measured − reported beside them; and the check that lists every such cell whose |Δ| exceeds a
tolerance (the regression check mmpretrain runs against its model zoo).

A measured cell is *linked* to a paper row when
  * the paper row names, in ``config``, the config of every run behind the cell (recipe, data and protocol:
    :func:`~vitbench.results.table.config_name` of the runs' ``result.json`` ``config``) with the experiment
    options they ran with (``options``: the ``--cfg-options`` that change the experiment);
  * the measured row's backbone, pre-training recipe and epochs are the paper row's ``variant``, ``recipe`` and
    ``epochs`` (a run shortened with ``--cfg-options`` records the epochs it trained, so it links to nothing;
    one fine-tuning config run from MAE and from distilled MAE checkpoints gives two experiments);
  * the cell's runs recorded the downstream protocol the paper table names (``protocol``: the same settings, e.g.
    ``upernet_xcit160k``) *as the linked config defines it*: the digest of its settings that the config resolves to
    (:func:`resolve_linked`, given the harness' reader of configs; the leaderboard reads none itself). A cell that
    matches in everything but its protocol, or its protocol's digest (a run with a setting overridden, or of an
    older version of the protocol), or whose config's digest is not known, is listed as *not compared*, with why,
    never set beside the paper's number;
  * the paper row reports that column (dataset and evaluation: top-1, ``v2``, ``real``, ``ms``, ...), at the same
    fine-tuning resolution: a ↑384 paper row (``img_size: 384``) links to the measured "ImageNet top-1 ↑384" cell
    of a 384 fine-tune, a row without ``img_size`` to the cells at the variant's own resolution.
Rows of several tables may report the same experiment: one link lists those that print the same number; tables that
print another number each get a link of their own (the cell shows the first, in the board's order). A row's
``config`` is a link target (:func:`vitbench.results.experiment.link_target`): a config with the experiment options
of the map's ``run`` (``cfg_options``) links only to runs that recorded those options (``result.json``
``options``), and a bare config only to runs that recorded none.
"""
import html
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .experiment import options_label, options_text, split_target
from .paper import cell_protocol, link_column
from .stats import Summary
from .table import Column, Row, Table


@dataclass(frozen=True)
class Link:
    row: Row  # the measured row
    column: Column
    measured: Summary  # the cell over its seeds
    reported: float
    sources: Tuple[Tuple[str, str], ...]  # (paper table id, the paper's model name) of every row reporting it

    @property
    def delta(self) -> float:
        return self.measured.mean - self.reported

    @property
    def source(self) -> str:
        return '; '.join(f'{table}: {model}' for table, model in self.sources)


@dataclass(frozen=True)
class ProtocolMismatch:
    """A measured cell that is a paper row's experiment in all but its downstream protocol (or the digest of its
    settings): not compared."""
    row: Row
    column: Column
    measured_protocol: str  # '' : none recorded
    sources: Tuple[Tuple[str, str, str], ...]  # (paper table id, the paper's model name, its protocol)
    why: str = ''  # the names agree: why the digests do not ('' : the names differ)

    def line(self) -> str:
        paper = '; '.join(f"{table}: {model} under {protocol or 'no named protocol'}"
                          for table, model, protocol in self.sources)
        return (f'{self.row.backbone} / {self.row.recipe} / {self.row.epochs} epochs, {self.column.label}: measured '
                f"under {self.measured_protocol or 'no named protocol'}; {paper}"
                + (f', but {self.why}' if self.why else '') + ': not compared')


def resolve_linked(paper: Sequence[Table], config_protocol: Callable[[str], Optional[dict]],
                   configs: Optional[Iterable[str]] = None) -> None:
    """Record on each paper row the protocol its linked configs resolve to (``config_protocol``: config ->
    ``{'name', 'digest'}`` or None, the harness' :func:`harness.experiment.linked_protocol.config_protocol`), for
    the configs ``configs`` names (default: all) of the rows measured under a protocol."""
    wanted = None if configs is None else set(configs)
    for table in paper:
        for row in table.rows:
            if not row.protocol:
                continue
            for config in row.configs:
                if wanted is None or config in wanted:
                    resolved = config_protocol(config) or {}
                    row.linked_protocols[config] = (resolved.get('name', ''), resolved.get('digest', ''))


def _digest_problem(paper_row: Row, config: str, protocol: str, digest: str) -> str:
    """Why a cell under the paper row's protocol name is still not its experiment ('' : it is)."""
    if not protocol:
        return ''  # no protocol on either side (ImageNet): the config is the recipe
    if config not in paper_row.linked_protocols:
        return (f'the digest {config} resolves {protocol} to is not known (tools/leaderboard.py resolves linked '
                'configs)')
    name, expected = paper_row.linked_protocols[config]
    if name != protocol:
        return f'{config} runs {name or "no named protocol"}, not the paper table\'s {protocol}'
    if digest != expected:
        return (f"its runs recorded {protocol} #{digest[:12] or 'unrecorded'} and {config} resolves it to "
                f'#{expected[:12]}: other settings')
    return ''


def link_reported(measured: Table, paper: Sequence[Table]) -> List[Link]:
    """Every measured cell linked to paper rows (see the module docstring), in table order."""
    return match_reported(measured, paper)[0]


def match_reported(measured: Table, paper: Sequence[Table]) -> Tuple[List[Link], List[ProtocolMismatch]]:
    """The measured cells linked to paper rows, and those that would be but ran under another protocol, or with
    other options of the config (not compared), each in table order."""
    index: Dict[tuple, List[Tuple[str, Row, float, str]]] = {}  # by the measured column's base (no protocol)
    bare: Dict[tuple, List[Tuple[str, Row, float, str, str]]] = {}  # the same by the config without its options
    for table in paper:
        for row in table.rows:
            for config in row.configs:
                for column, value in row.values.items():
                    key = (config, row.variant, row.link_recipe, row.epochs, link_column(row, column))
                    index.setdefault(key, []).append((table.id, row, value, cell_protocol(row, column)))
                    bare.setdefault((split_target(config)[0], *key[1:]), []).append(
                        (table.id, row, value, cell_protocol(row, column), config))
    links, mismatches = [], []
    for row in measured.rows:
        for column in measured.columns:
            configs = row.cell_configs.get(column) or ()
            protocols = row.cell_protocols.get(column) or ('',)
            digests = row.cell_digests.get(column) or ('',)
            if column not in row.stats or len(configs) != 1 or len(protocols) != 1 or len(digests) != 1:
                continue  # no value, or seeds from different configs or protocols: not one experiment
            key = (configs[0], row.backbone, row.recipe, row.epochs, column.base)
            candidates = index.get(key) or []
            if not candidates:  # the config, but run with other options than any row names: say so
                others = bare.get((split_target(configs[0])[0], *key[1:])) or []
                if others:
                    mismatches.append(ProtocolMismatch(row, column, protocols[0], tuple(
                        (table_id, paper_row.backbone, protocol) for table_id, paper_row, _, protocol, _ in others),
                        why=f'its runs changed the config with {_options_of(configs[0])}, the paper row\'s with '
                            + ' / '.join(dict.fromkeys(_options_of(c[4]) for c in others))))
                continue
            same_name = [c for c in candidates if c[3] == protocols[0]]
            partial = row.cells[column].partial
            problems = [partial or _digest_problem(c[1], configs[0], protocols[0], digests[0]) for c in same_name]
            reporting = [c for c, problem in zip(same_name, problems) if not problem]
            by_value: Dict[float, list] = {}  # two tables that print different numbers: each links its own
            for c in reporting:
                by_value.setdefault(round(c[2], 9), []).append(c)
            for group in by_value.values():
                links.append(Link(row, column, row.stats[column], group[0][2],
                                  tuple((table_id, paper_row.backbone) for table_id, paper_row, _, _ in group)))
            if not reporting:
                mismatches.append(ProtocolMismatch(row, column, protocols[0], tuple(
                    (table_id, paper_row.backbone, protocol) for table_id, paper_row, _, protocol in candidates),
                    why=problems[0] if problems else ''))
    return links, mismatches


def shown_tables(measured: Table, paper: Sequence[Table]) -> List[Table]:
    """The paper tables a board shows: those ``papers/board.yaml`` names, always; another table of the map (its
    ``on_demand`` tables: every table with a row that can link) only where a measured cell of this board links to one
    of its rows, or is its experiment under another protocol or options (listed as not compared). A board of a few
    runs so shows the tables of its runs, not the hundreds of rows the map holds."""
    links, mismatches = match_reported(measured, paper)
    used = {table_id for link in links for table_id, _ in link.sources}
    used |= {source[0] for m in mismatches for source in m.sources}
    return [t for t in paper if not t.on_demand or t.id in used]


def _options_of(target: str) -> str:
    """'no options' or 'model.distillation=null' of a link target."""
    return options_label(options_text(split_target(target)[1]))


def links_by_cell(links: Sequence[Link]) -> Dict[Tuple[int, Column], Link]:
    """The link shown in each linked cell: the first of its tables in the board's order (the section lists all)."""
    out: Dict[Tuple[int, Column], Link] = {}
    for link in links:
        out.setdefault((id(link.row), link.column), link)
    return out


def fmt_reported(link: Optional[Link]) -> str:
    """' (paper 83.1, Δ −0.4)' after a linked cell's value; '' for any other cell."""
    if link is None:
        return ''
    return f' (paper {link.reported:.1f}, Δ {link.delta:+.1f})'


CSV_FIELDS = ('reported', 'Δ reported', 'reported in')  # per measured column, after its own fields


def csv_cells(link: Optional[Link], number, mismatch: Optional[ProtocolMismatch] = None) -> List[str]:
    """The :data:`CSV_FIELDS` of one cell (``number`` formats a float); a cell under another protocol than the
    paper's says so in the last."""
    if link is None:
        return ['', '', '' if mismatch is None else mismatch.line()]
    return [number(link.reported), number(link.delta), link.source]


def beyond(links: Sequence[Link], tolerance: float) -> List[Link]:
    """The linked cells whose |Δ| exceeds ``tolerance`` (percentage points)."""
    return [link for link in links if abs(link.delta) > tolerance + 1e-9]


# ---------------------------------------------------------------------------------------------- the section

LEGEND = ('Measured cells that are the same experiment as a paper row: the config of the runs is one the row '
          'names, with its variant, pre-training recipe and epochs (vitbench/results/papers/<document>.yaml, key '
          '`config`), under the downstream protocol of the paper table (key `protocol`). '
          'Δ = measured − reported; `tools/leaderboard.py RUNS --check-reproduction TOL` lists those beyond ±TOL.')
HEADER = ['backbone', 'pretraining', 'epochs', 'metric', 'measured', 'reported', 'Δ', 'paper', 'protocol']


def section_rows(links: Sequence[Link]) -> List[List[str]]:
    """The rows of the "Reported vs reproduced" table, in :data:`HEADER`'s order."""
    rows = []
    for link in links:
        m = link.measured
        measured = f'{m.mean:.1f}' if m.n < 2 else f'{m.mean:.1f} ± {m.std:.1f} (n={m.n})'
        rows.append([link.row.backbone, link.row.recipe, '' if link.row.epochs is None else str(link.row.epochs),
                     link.column.label, measured, f'{link.reported:.1f}', f'{link.delta:+.1f}', link.source,
                     (link.row.cell_protocols.get(link.column) or ('',))[0] or '-'])
    return rows


MISMATCH_INTRO = 'Not compared, the same experiment under another downstream protocol than the paper table\'s:'


def markdown_section(links: Sequence[Link], mismatches: Sequence[ProtocolMismatch] = ()) -> List[str]:
    if not links and not mismatches:
        return []
    lines = ['## Reported vs reproduced', '', LEGEND, '']
    if links:
        lines += ['| ' + ' | '.join(HEADER) + ' |',
                  '|' + '|'.join('---:' if 2 <= i <= 6 and i != 3 else '---' for i in range(len(HEADER))) + '|']
        lines += ['| ' + ' | '.join(text.replace('|', '\\|') for text in row) + ' |' for row in section_rows(links)]
    if mismatches:
        lines += ['', MISMATCH_INTRO, ''] + [f'- {m.line()}' for m in mismatches]
    return lines


def html_section(links: Sequence[Link], mismatches: Sequence[ProtocolMismatch] = ()) -> str:
    if not links and not mismatches:
        return ''
    e = html.escape
    parts = [f'<h2>Reported vs reproduced</h2><p>{e(LEGEND)}</p>']
    if links:
        head = ''.join(f'<th>{e(h)}</th>' for h in HEADER)
        body = ['<tr>' + ''.join(f'<td class="num">{e(t)}</td>' if 2 <= i <= 6 and i != 3 else f'<td>{e(t)}</td>'
                                 for i, t in enumerate(row)) + '</tr>' for row in section_rows(links)]
        parts.append(f'<table><thead><tr>{head}</tr></thead><tbody>\n' + '\n'.join(body) + '\n</tbody></table>')
    if mismatches:
        parts.append(f'<p>{e(MISMATCH_INTRO)}</p><ul>' + ''.join(f'<li>{e(m.line())}</li>' for m in mismatches)
                     + '</ul>')
    return ''.join(parts)


def check_lines(links: Sequence[Link], tolerance: float) -> List[str]:
    """The report of ``--check-reproduction``: one line per linked cell beyond the tolerance, then a summary."""
    bad = beyond(links, tolerance)
    lines = [f'{link.row.backbone} / {link.row.recipe} / {link.row.epochs} epochs, {link.column.label}: measured '
             f'{link.measured.mean:.2f} (n={link.measured.n}), reported {link.reported:.2f} ({link.source}), '
             f'Δ {link.delta:+.2f}' for link in bad]
    lines.append(f'{len(links)} measured cells linked to paper rows; {len(bad)} beyond ±{tolerance:g}')
    return lines
