"""A ``leaderboard`` stage of a pipeline: the table of the runs it depends on (or its ``runs``), written in its
formats, with the paired orderings it ``expect``s checked (:mod:`vitbench.results.expectations`)."""
import glob
import os.path as osp
import time
from typing import Callable, Dict, List

from .command import resolve
from .dag import Pipeline, Stage
from .stage_result import UNFINISHED, StageResult


def runs_of(pipeline: Pipeline, stage: Stage, existing: bool = True) -> List[str]:
    """Its ``runs``, else the work dirs of the train / test stages it depends on (that ran)."""
    if stage.spec.get('runs'):
        return resolve(pipeline, stage, stage.spec['runs'])
    deps = [pipeline.stage(d) for d in stage.deps]
    return [d.work_dir for d in deps if d.kind in ('train', 'test') and (not existing or osp.isdir(d.work_dir))]


def run_leaderboard(pipeline: Pipeline, stage: Stage, counter: str, start: float,
                    results: Dict[str, StageResult], say: Callable[[str], None]) -> StageResult:
    """Write the leaderboard of what finished; check its expected orderings."""
    from vitbench.results.expectations import check_expectations, expectations_from
    from harness.experiment.linked_protocol import config_protocol
    from vitbench.results.render import write_leaderboard
    from vitbench.results.table import LeaderboardError
    spec = stage.spec
    out = resolve(pipeline, stage, spec['out'])
    outputs = {fmt: f'{out}.{fmt}' for fmt in spec['formats']}
    # the keywords only when set, so that a write_leaderboard without them still renders the other pipelines
    options = {'baseline': spec['baseline']} if spec.get('baseline') else {}
    figures = sorted({f for pattern in resolve(pipeline, stage, spec.get('figures') or [])
                      for f in glob.glob(pattern)})
    if figures:
        options['figures'] = figures
    if spec.get('intervals'):
        options['intervals'] = spec['intervals']
    # tools/benchmark.py records (a paper table's speed rows): those its benchmark stages wrote
    benchmarks = [p for p in resolve(pipeline, stage, spec.get('benchmarks') or []) if osp.isfile(p)]
    if benchmarks:
        options['benchmarks'] = benchmarks
    # what it tabulates without, one line each: a table that cannot be made says why (e.g. every training failed)
    unfinished = [results[d] for d in stage.deps if d in results and results[d].status in UNFINISHED]
    for result in unfinished:
        say(f'{counter} {stage.id}: without {result.id}, which did not finish ({result.status}: '
            f'{result.detail or "-"})')
    try:
        table = write_leaderboard(runs_of(pipeline, stage), outputs, paper=spec.get('paper', True),
                                  config_protocol=config_protocol, **options)
    except (LeaderboardError, OSError, ValueError) as e:
        cause = f'{len(unfinished)} of the {len(stage.deps)} stages it tabulates did not finish (above); ' \
            if unfinished else ''
        say(f'{counter} {stage.id}: FAILED: {cause}{e}')
        return StageResult(stage.id, 'failed', time.time() - start, detail=cause + str(e))
    metric = f'{len(table.rows)} rows, {len(table.conflicts)} conflicts'
    if table.rejected:  # written without them; a result.json nobody can read is no result to pass over
        for message in table.rejected:
            say(f'{counter} {stage.id}: left out {message}')
        detail = f'{len(table.rejected)} result files left out (above)'
        say(f'{counter} {stage.id}: FAILED: {detail} -> {", ".join(outputs.values())}')
        return StageResult(stage.id, 'failed', time.time() - start, metric, detail=detail)
    if spec.get('expect'):
        expectations = expectations_from(spec['expect'], stage.id)
        if pipeline.left_out:  # e.g. MAE for a PatchConvNet: no row to check, which is no broken promise
            recipes = {r.recipe for r in table.rows}
            for e in [e for e in expectations if e.row not in recipes]:
                say(f'{counter} {stage.id}: expected ordering {e.row} > {e.over} not checked: no '
                    f"'{e.row}' row, its stages were left out for this pipeline's backbones")
            expectations = [e for e in expectations if e.row in recipes]
        try:
            outcomes = check_expectations(table, expectations)
        except LeaderboardError as e:
            say(f'{counter} {stage.id}: FAILED: {e}')
            return StageResult(stage.id, 'failed', time.time() - start, detail=str(e))
        broken = [o for o in outcomes if not o.holds]
        for outcome in outcomes:
            say(f'{counter} {stage.id}: expected ordering {outcome.line}')
        if broken:  # the leaderboard is written; the stage fails so that the science breaking is not silent
            detail = f'{len(broken)} of {len(outcomes)} expected orderings do not hold'
            say(f'{counter} {stage.id}: FAILED: {detail} -> {", ".join(outputs.values())}')
            return StageResult(stage.id, 'failed', time.time() - start, metric, detail=detail)
        metric += f', {len(outcomes)} expected orderings hold'
    say(f'{counter} {stage.id}: ok, {metric} -> {", ".join(outputs.values())}')
    return StageResult(stage.id, 'ran', time.time() - start, metric, detail=', '.join(outputs.values()))
