"""Map rows measured by tools/benchmark.py rather than trained (``benchmark: {mode: ...}``): thesis Table 3.1's
throughput, "Three things" Table 4's batch sweep and Figure 4's fine-tuning costs. They count as runnable,
``tools/pipeline.py --table`` runs one benchmark stage per spec, and the leaderboard shows its record's ratios
beside the paper's (never absolute images/s: they depend on the hardware)."""
import importlib.util
import json
from pathlib import Path

import pytest

from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from harness.pipeline.command import command_of
from harness.pipeline.paper_table import benchmark_stages, describe, load_table
from harness.pipeline.run import PipelineRunner
from vitbench.results.coverage import coverage
from vitbench.results.paper_map import _table, load_map
from vitbench.results.result_file import LeaderboardError

TOOLS = Path(__file__).resolve().parents[1] / 'tools'


def _benchmark_tool():
    spec = importlib.util.spec_from_file_location('benchmark', TOOLS / 'benchmark.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_rows_count_as_runnable_and_recorded_never_linked():
    counts = {(c.document, c.table): c for c in coverage(load_map())}
    for key, n in ((('thesis', '3.1'), 3), (('three_things', '4'), 7), (('three_things', 'Figure 4'), 2)):
        c = counts[key]
        assert (c.rows, c.recorded, c.runnable, c.linked, c.state) == (n, n, n, 0, 'whole'), key
        assert 'measured by tools/benchmark.py, not trained' in c.why


def test_a_bad_benchmark_spec_is_one_line_naming_the_row():
    rows = [dict(model='ViT-X', benchmark=dict(mode='speed'))]
    with pytest.raises(LeaderboardError, match=r"^here \(thesis 9.9\) \(ViT-X\): 'benchmark' is .*expected \{mode: "
                                               r"one of \('paper', 'parallel', 'pretrain'\)"):
        _table('thesis', dict(number='9.9', title='t', rows=rows), 'here')
    with pytest.raises(LeaderboardError, match=r"^here \(thesis 9.9\): 'benchmark' is 'paper', expected"):
        _table('thesis', dict(number='9.9', title='t', rows=[dict(model='ViT-X')], benchmark='paper'), 'here')


def test_every_benchmark_spec_of_the_map_is_a_command_tools_benchmark_accepts():
    """The rows' specs and the tables' own (thesis 3.5, 6.7, 6.8: their training rows state their speed)."""
    parse_args = _benchmark_tool().parse_args
    stages = {t.key: benchmark_stages(t) for t in load_map() if not t.same_as}
    stages = {k: v for k, v in stages.items() if v}
    assert set(stages) >= {'thesis:3.1', 'thesis:3.5', 'thesis:6.7', 'thesis:6.8', 'three_things:4',
                           'three_things:Figure 4'}
    for key, table_stages in stages.items():
        for stage, models in table_stages:
            argv = stage['argv']
            assert argv[0] == 'tools/benchmark.py' and argv[-2:] == ['--json', '{work_dir}/benchmark.json'] and models
            # an unknown option or value exits here (fp32: no probe of the CPU's bf16 speed)
            assert parse_args(argv[1:-2] + ['--device', 'cpu', '--dtypes', 'fp32']).suite == argv[1], key
    (stage, models), = stages['thesis:6.7']
    assert stage['argv'][1:4] == ['paper', '--paper-table', 'thesis:6.7'] and len(models) == 7  # S to H, ↑384


def test_the_dry_run_shows_the_benchmark_stage(tmp_path):
    lines = describe('three_things:4')
    assert lines[0].startswith('table three_things:4: ') and '7 of its 7 rows run' in lines[0]
    assert lines[1].startswith('  benchmark_parallel: batch 1, batch 2,') and (
        'tools/benchmark.py parallel --parallel-pairs s18x2_par_vs_seq,b18x2_par_vs_seq' in lines[1])
    assert "benchmark_parallel's measured ratios beside the paper's" in lines[2]
    pipeline = load_table('three_things:4', work_dir=str(tmp_path))
    assert [(s.name, s.kind) for s in pipeline.stages] == [('benchmark_parallel', 'command'),
                                                            ('leaderboard', 'leaderboard')]
    plan = '\n'.join(PipelineRunner(pipeline).plan())
    assert f'tools/benchmark.py parallel --parallel-pairs s18x2_par_vs_seq,b18x2_par_vs_seq --json ' \
           f'{tmp_path}/benchmark_parallel/benchmark.json' in plan


def test_a_tables_benchmark_stage_writes_its_record_and_the_board_shows_the_ratios(tmp_path):
    """thesis Table 3.1 at a tiny size: the stage's own command (plus --quick on CPU, two of its rows), then the
    pipeline's leaderboard stage renders the record: measured ratio beside the paper's, not the images/s."""
    pipeline = load_table('thesis:3.1', work_dir=str(tmp_path), launcher=[])
    stage = pipeline.stage('benchmark_paper')
    argv = command_of(pipeline, stage)
    assert argv[1].endswith('tools/benchmark.py') and argv[2:6] == ['paper', '--paper-table', 'thesis:3.1',
                                                                   '--paper-rows']
    record = tmp_path / 'benchmark_paper' / 'benchmark.json'
    assert argv[-2:] == ['--json', str(record)]
    record.parent.mkdir()
    _benchmark_tool().main(argv[2:] + ['--quick', '--device', 'cpu', '--threads', '1', '--gemm-size', '64',
                                       '--paper-rows', 'DeiT-Ti,DeiT-S', '--paper-reference', 'DeiT-S'])
    ratios = json.loads(record.read_text())['ratios']
    key = 'thesis:3.1/DeiT-Ti/throughput_vs_DeiT-S'
    assert ratios[key + '/paper'] == pytest.approx(2536 / 940) and ratios[key] > 1  # Ti does a quarter the FLOPs
    runner = PipelineRunner(pipeline)
    results = {r.id: r.status for r in runner.run()}
    assert results == {'benchmark_paper': 'cached', 'leaderboard': 'ran'}  # the record is the stage's 'creates'
    board = (tmp_path / 'leaderboard.md').read_text()
    assert '## Speed and memory, measured by tools/benchmark.py (ratios)' in board
    assert 'Absolute images/s and MB depend on the hardware' in board
    assert f'| {key} | {ratios[key]:.2f} | 2.70 |' in board
    html = (tmp_path / 'leaderboard.html').read_text()
    assert 'Absolute images/s and MB depend on the hardware' in html and f'<td>{key}</td>' in html
    # by hand: tools/leaderboard.py RUNS --benchmark FILE (a folder without result.json is no refusal then)
    spec = importlib.util.spec_from_file_location('leaderboard', TOOLS / 'leaderboard.py')
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path / 'by_hand.md'
    assert tool.main([str(record.parent), '--no-paper', '--benchmark', str(record), '--out', str(out)]) == 0
    assert f'| {key} | {ratios[key]:.2f} | 2.70 |' in out.read_text() and '1 thread, ' in out.read_text()


def test_a_broken_record_is_refused_naming_the_file(tmp_path):
    from vitbench.results.benchmark_record import read_benchmark
    bad = tmp_path / 'benchmark.json'
    bad.write_text(json.dumps({'machine': {}, 'ratios': {'a': 'fast'}}))
    with pytest.raises(LeaderboardError, match=rf"^{bad}: 'ratios' \['a'\] are not numbers"):
        read_benchmark(str(bad))
