"""tools/list_backbones.py and tools/benchmark.py (the JSON contract of docs/architecture.md)."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / 'tools'


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_list_backbones(capsys):
    rows = _tool('list_backbones').main(['deit3_*', '--no-flops'])
    out = capsys.readouterr().out
    # T S M B L H; S and B as 36 blocks and 18x2; the 1B-parameter H as 52 blocks and 26x2
    assert [r['name'] for r in rows] == sorted(r['name'] for r in rows) and len(rows) == 12
    assert 'deit3_base_patch16_18x2' in out and '18x2' in out and '256.73' in out
    assert {r['depth'] for r in rows if r['name'].startswith('deit3_huge_patch14_')} == {'32', '52', '26x2'}
    (demo,) = _tool('list_backbones').main(['vit_demo*'])
    assert demo['gflops'] > 0 and demo['resolution'] == 64
    with pytest.raises(SystemExit,
                       match="no variant matches 'resnet\\*'; timm has .* list them with 'timm:resnet\\*'"):
        _tool('list_backbones').main(['resnet*'])


def test_list_backbones_lists_timms_models_from_its_registry(capsys, tmp_path):
    """Issue 47: 'timm:*' said "no variant matches"; --backbone timm:NAME takes every one of them."""
    import timm
    rows = _tool('list_backbones').main(['timm:*', '--json', str(tmp_path / 'timm.json')])
    assert [r['name'] for r in rows] == ['timm:' + n for n in timm.list_models()] and len(rows) > 1000
    assert json.loads((tmp_path / 'timm.json').read_text()) == rows
    deit3 = {r['name']: r for r in _tool('list_backbones').main(['timm:deit3_base*'])}
    assert deit3['timm:deit3_base_patch16_224'] == dict(name='timm:deit3_base_patch16_224', module='deit',
                                                        pretrained=['fb_in1k', 'fb_in22k_ft_in1k'],
                                                        suite_variant='deit3_base_patch16_224')
    assert deit3['timm:deit3_base_patch16_384']['suite_variant'] is None  # the suite has no 384 px DeiT III
    out = capsys.readouterr().out
    assert 'timm:deit3_base_patch16_384' in out and f'{len(deit3)} timm model(s)' in out
    with pytest.raises(SystemExit, match="no timm model matches 'timm:no_such_net\\*'"):
        _tool('list_backbones').main(['timm:no_such_net*'])


def test_the_suite_variant_of_a_timm_model_is_the_same_architecture():
    """The pairs the listing names have timm's parameter count (timm builds the reference, both on the meta device;
    the widths up to 384 of DeiT, DeiT III, CaiT and ResMLP)."""
    import timm
    import torch
    from backbones import create_model, get_variant, list_models, suite_variant_of
    pairs = {name: suite_variant_of(name) for name in timm.list_models() if suite_variant_of(name)}
    assert set(pairs.values()) <= set(list_models()) and len(pairs) >= 18  # DeiT, DeiT III, CaiT, ResMLP
    assert pairs['resmlp_12_224'] == 'resmlp_12' and suite_variant_of('timm:cait_s24_224.fb_dist_in1k') == 'cait_s24_224'
    for timm_name, ours in pairs.items():
        if get_variant(ours)['kwargs']['embed_dim'] > 384:  # the small ones of each family: seconds, not tens
            continue
        with torch.device('meta'):
            counts = [sum(p.numel() for p in m.parameters()) for m in (timm.create_model(timm_name), create_model(ours))]
        assert counts[0] == counts[1], (timm_name, ours, counts)


def test_list_backbones_lists_what_imports_register(capsys, tmp_path, monkeypatch):
    """A module of one's own (--imports, as a run's custom_imports): its timm model under 'timm:', its family's
    variants with the suite's."""
    from backbones.family import FAMILIES
    from backbones.variants import VARIANTS
    fixtures = Path(__file__).parent / 'toy_fixtures'
    # the toy family under a name of its own: a registration cannot be undone, and test_extending_backbone.py
    # registers the toy family itself
    (tmp_path / 'listed_family.py').write_text((fixtures / 'toy_family.py').read_text()
                                               .replace("'toypool", "'listpool").replace('ToyPoolNet', 'ListPoolNet'))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        rows = _tool('list_backbones').main(['*pool*', '--no-flops', '--imports', 'listed_family'])
    finally:  # the tests that loop over every family see the suite's own
        FAMILIES.pop('listpool', None)
        VARIANTS.pop('listpool_tiny_patch8_64', None)
        sys.modules.pop('listed_family', None)
    assert [(r['name'], r['family'], r['depth'], r['width']) for r in rows] == [
        ('listpool_tiny_patch8_64', 'ListPoolNet', '6', 32)]
    (row,) = _tool('list_backbones').main(['timm:vitbench_test_*', '--imports', '_custom_timm_model'])
    assert row == dict(name='timm:vitbench_test_two_stage', module='_custom_timm_model', pretrained=[],
                       suite_variant=None)
    assert 'timm:vitbench_test_two_stage' in capsys.readouterr().out
    with pytest.raises(SystemExit, match='^error: --imports no_such_module: ModuleNotFoundError'):
        _tool('list_backbones').main(['--imports', 'no_such_module'])


def test_benchmark_json_contract(tmp_path):
    path = tmp_path / 'bench.json'
    _tool('benchmark').main(['backbones', '--quick', '--models', 'vit_demo_patch8_64', '--modes', 'fwd,fwd+bwd',
                             '--dtypes', 'fp32,bf16', '--device', 'cpu', '--json', str(path)])
    result = json.loads(path.read_text())
    assert set(result) == {'machine', 'rows', 'ratios'}
    assert {(r['impl'], r['dtype']) for r in result['rows']} == {
        (i, d) for i in ('vitbench', 'timm') for d in ('fp32', 'bf16')}
    assert result['ratios']['vit_demo_patch8_64/fwd/fp32/vitbench_vs_timm'] > 0
    assert result['ratios']['vit_demo_patch8_64/fwd/vitbench_bf16_vs_fp32'] > 0
    machine = result['machine']
    assert machine['device'] == 'cpu' and machine['clock'] == 'wall' and machine['datasheet_bf16_tflops'] is None
    assert set(machine['gemm_tflops']) == {'fp32', 'bf16'}
    for row in result['rows']:
        assert row['device'] == 'cpu' and row['compiled'] is False and row['mfu_datasheet'] is None
        # MFU is the row's own model FLOP rate over the run's measured GEMM rate of its precision
        flops = (6 if row['mode'] == 'fwd+bwd' else 2) * row['gflops'] * 1e9 * row['batch'] * 1e3 / row['ms_per_iter']
        assert row['model_tflops'] == pytest.approx(flops / 1e12)
        assert row['mfu'] == pytest.approx(flops / (machine['gemm_tflops'][row['dtype']] * 1e12))
        assert row['peak_mem_mb'] is None or row['peak_mem_mb'] > 0


def test_benchmark_parallel_suite_sweeps_batches_beside_table4(tmp_path):
    """"Three things" Table 4: fused ("par") vs sequential ("seq") S18x2 over a batch sweep, a quick run at a tiny
    size; every batch has both rows, the measured ratio and the paper's (61 / 44 im/s at batch 1 on a V100)."""
    path = tmp_path / 'parallel.json'
    _tool('benchmark').main(['parallel', '--quick', '--parallel-pairs', 's18x2_par_vs_seq', '--img-size', '32',
                             '--parallel-depth', '1', '--dtypes', 'fp32', '--device', 'cpu', '--json', str(path)])
    result = json.loads(path.read_text())
    assert [(r['impl'], r['batch']) for r in result['rows']] == [('par', 1), ('seq', 1), ('par', 2), ('seq', 2)]
    assert all(r['img_per_s'] > 0 and r['ms_per_iter'] > 0 for r in result['rows'])
    ratios = result['ratios']
    assert ratios['parallel/s18x2_par_vs_seq/fp32/b1'] > 0
    assert ratios['parallel/s18x2_par_vs_seq/fp32/b1/paper'] == pytest.approx(61 / 44)


def test_benchmark_pretrain_suite_on_cpu(tmp_path):
    """MAE-lite Tiny vs supervised and attention-only vs full fine-tuning, a quick run: every row has its columns,
    and the model FLOPs say what the recipes are (MAE's encoder sees a quarter of the patches; a fine-tuning
    mode runs the same model)."""
    path = tmp_path / 'pretrain.json'
    _tool('benchmark').main(['pretrain', '--quick', '--pairs', 'mae_vs_supervised,attn_vs_full_ft', '--dtypes', 'fp32',
                             '--device', 'cpu', '--threads', '1', '--profile', '--json', str(path)])
    result = json.loads(path.read_text())
    assert [(r['pair'], r['impl']) for r in result['rows']] == [
        ('mae_vs_supervised', 'supervised'), ('mae_vs_supervised', 'mae'),
        ('attn_vs_full_ft', 'full_ft'), ('attn_vs_full_ft', 'attn_ft')]
    for row in result['rows']:
        assert row['ms_per_iter'] > 0 and row['mfu'] > 0 and row['gmacs'] > 0 and row['peak_mem_mb'] > 0
        # --profile: the step's time by kind, most of it in the matrix products of a ViT
        assert max(row['profile']['ms_per_step'], key=row['profile']['ms_per_step'].get) == 'matmul'
    ratios = result['ratios']
    assert set(ratios) == {f'pretrain/{pair}/fp32/{what}' for pair in ('mae_vs_supervised', 'attn_vs_full_ft')
                           for what in ('step', 'flops', 'peak_memory', 'trainable_params')} | {
        f'pretrain/attn_vs_full_ft/fp32/{what}/paper' for what in ('step', 'peak_memory', 'trainable_params')}
    # "Three things" §4 on Figure 4, printed beside the measured ratios
    assert ratios['pretrain/attn_vs_full_ft/fp32/peak_memory/paper'] == 0.90
    assert ratios['pretrain/attn_vs_full_ft/fp32/trainable_params/paper'] == pytest.approx(1 / 3)
    assert ratios['pretrain/mae_vs_supervised/fp32/flops'] == pytest.approx(0.28, abs=0.01)
    assert ratios['pretrain/attn_vs_full_ft/fp32/flops'] == 1.0
    attn, full = result['rows'][3], result['rows'][2]
    assert attn['trainable_params_M'] < 0.4 * full['trainable_params_M']
    assert ratios['pretrain/attn_vs_full_ft/fp32/trainable_params'] == pytest.approx(
        attn['trainable_params_M'] / full['trainable_params_M'])
    # Figure 4's other pair: the FFN-only fine-tune trains the other two thirds (built, not timed here)
    from pretrain.benchmark import PAIRS, _build
    assert PAIRS['ffn_vs_full_ft'] == ('full_ft', 'ffn_ft')
    ffn = sum(p.numel() for p in _build('ffn_ft', 'cpu')[0].parameters() if p.requires_grad) / 1e6
    assert 0.6 * full['trainable_params_M'] < ffn < full['trainable_params_M'] - attn['trainable_params_M'] + 0.5


def test_mae_b_costs_what_the_mae_paper_counts():
    """MAE-B's step (ViT-B encoder on 49 + 1 tokens, 8 x 512 decoder on all 197) is 0.56x supervised ViT-B's in
    model FLOPs: the ratio the pretrain suite's measured step time is held against."""
    import torch

    from pretrain.benchmark import _build, step_macs
    x = torch.zeros(1, 3, 224, 224)
    samples = dict(gt_label=torch.zeros(1, dtype=torch.long))
    mae, sup = (step_macs(_build(name, 'cpu')[0], x, samples) for name in ('mae_b', 'supervised_b'))
    assert sup == (pytest.approx(17.58e9, rel=1e-3), 0.)
    # encoder: ViT-B on 50 tokens; decoder: 8 blocks of 512 on 197 tokens, embedding and pixel prediction
    blocks = lambda n, d, depth: depth * (12 * n * d * d + 2 * n * n * d)  # noqa: E731
    expected = 196 * 768 * 768 + blocks(50, 768, 12) + 50 * 768 * 512 + blocks(197, 512, 8) + 197 * 512 * 768
    assert mae[0] == pytest.approx(expected, rel=0.01) and mae[1] == 0.
    assert mae[0] / sup[0] == pytest.approx(0.557, abs=0.005)


BLOCK_OPENMMLAB_TASKS = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('mmdet', 'mmcv', 'mmseg'):
            raise ImportError(f'{name} is hidden from this test')
sys.meta_path.insert(0, Refuse())
sys.argv = ['tools/benchmark.py'] + sys.argv[1:]
import runpy
runpy.run_path('tools/benchmark.py', run_name='__main__')
assert not [m for m in sys.modules if m.split('.')[0] in ('mmdet', 'mmcv', 'mmseg')]
"""


@pytest.mark.parametrize('argv', [
    ['backbones', '--models', 'vit_demo_patch8_64', '--modes', 'fwd'],
    ['pretrain', '--pairs', 'mae_vs_supervised,dmae_vs_mae']])
def test_benchmark_suites_run_without_mmcv_mmdet_mmseg(argv, tmp_path):
    """Both suites start and finish on a machine without the detection and segmentation stack (a GPU machine
    often has only torch and timm): nothing on their path imports it, the registries' ``locations`` included."""
    import subprocess
    import sys
    path = tmp_path / 'out.json'
    done = subprocess.run([sys.executable, '-c', BLOCK_OPENMMLAB_TASKS, *argv, '--quick', '--dtypes', 'fp32',
                           '--device', 'cpu', '--threads', '1', '--json', str(path)],
                          cwd=TOOLS.parent, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert json.loads(path.read_text())['ratios']


def test_benchmark_compile_measures_compiled_models(tmp_path, monkeypatch):
    """--compile wraps both sides in torch.compile (here the aot_eager backend: dynamo's capture and AOTAutograd's
    backward, without inductor's minutes of C++ compilation on CPU) and still checks outputs first."""
    import torch
    compiled = []
    real = torch.compile

    def spy(model, **kwargs):
        compiled.append((type(model).__name__, kwargs.get('backend')))
        return real(model, **kwargs)
    monkeypatch.setattr(torch, 'compile', spy)
    path = tmp_path / 'bench.json'
    _tool('benchmark').main(['backbones', '--quick', '--models', 'vit_demo_patch8_64', '--modes', 'fwd+bwd',
                             '--dtypes', 'fp32', '--device', 'cpu', '--compile', 'aot_eager', '--json', str(path)])
    assert compiled == [('VisionTransformer', 'aot_eager'), ('VisionTransformer', 'aot_eager')]
    result = json.loads(path.read_text())
    assert result['machine']['compile'] == 'aot_eager' and all(r['compiled'] for r in result['rows'])


@pytest.mark.slow
def test_benchmark_compile_with_inductor(tmp_path):
    """The default backend end to end on CPU (C++ code generation: about a minute per model on 2 cores)."""
    path = tmp_path / 'bench.json'
    _tool('benchmark').main(['backbones', '--quick', '--models', 'vit_demo_patch8_64', '--modes', 'fwd',
                             '--dtypes', 'fp32', '--device', 'cpu', '--compile', '--json', str(path)])
    assert json.loads(path.read_text())['ratios']['vit_demo_patch8_64/fwd/fp32/vitbench_vs_timm'] > 0


def test_benchmark_dense_suite_times_upernet_beside_mmsegs_own_vit(tmp_path):
    """The dense suite on CPU: the same UperNet (neck, heads, loss) on vitbench's ViT and on mmseg's
    VisionTransformer of the same architecture, stepped by the optim wrapper --amp chooses (tools/train.py's)."""
    from vitbench.engine.amp import amp_plan
    from vitbench.engine.cpu_amp import cpu_has_fast_bf16
    path = tmp_path / 'dense.json'
    _tool('benchmark').main(['dense', '--device', 'cpu', '--dense-arch', 'vit_demo_patch8_64', '--dense-size', '64',
                             '--rounds', '1', '--warmup', '1', '--json', str(path)])
    data = json.loads(path.read_text())
    ours, theirs = data['rows']
    assert (ours['impl'], theirs['impl']) == ('vitbench', 'mmseg_vit') and ours['suite'] == 'dense'
    # the same model but for the backbone's implementation: parameters equal within a norm's worth
    assert abs(ours['params_M'] - theirs['params_M']) < 0.001 * ours['params_M']
    assert ours['dtype'] == amp_plan('cpu', 'seg', cpu_fast_bf16=cpu_has_fast_bf16()).precision
    ratio = data['ratios']['dense/upernet_vitbench_vs_mmseg_vit_step']
    assert ratio == pytest.approx(ours['ms_per_iter'] / theirs['ms_per_iter'])


def test_benchmark_paper_suite_measures_a_tables_ratios_beside_the_papers(tmp_path):
    """thesis Table 6.7's ViT-S and ViT-S↑384, a quick CPU run: the rows carry the paper's images/s and peak MB from
    the map, the ratios divide by the reference row as measured and as printed; 384 px costs ~3.5x the FLOPs."""
    path = tmp_path / 'paper.json'
    _tool('benchmark').main(['paper', '--paper-table', 'thesis:6.7', '--paper-rows',
                             'DeiT III ViT-S,DeiT III ViT-S↑384', '--batch', '2', '--rounds', '2', '--device', 'cpu',
                             '--threads', '1', '--gemm-size', '64', '--json', str(path)])
    result = json.loads(path.read_text())
    small, large = result['rows']
    assert (small['img_size'], small['paper_img_per_s'], small['paper_peak_mem_mb']) == (224, 1891.0, 987.0)
    assert (large['img_size'], large['paper_img_per_s'], large['paper_peak_mem_mb']) == (384, 424.0, 4569.0)
    ratios = result['ratios']
    key = 'thesis:6.7/DeiT III ViT-S↑384/throughput_vs_DeiT III ViT-S'
    assert ratios[key + '/paper'] == pytest.approx(424 / 1891)
    assert ratios[key] == pytest.approx(large['img_per_s'] / small['img_per_s']) and ratios[key] < 0.8
    assert large['paper_throughput_ratio'] == ratios[key + '/paper'] and small['reference'] == 'DeiT III ViT-S'
    with pytest.raises(SystemExit, match=r"--paper-rows: \['ViT-Q'\] are not rows of thesis:6.7"):
        _tool('benchmark').main(['paper', '--paper-rows', 'ViT-Q', '--device', 'cpu', '--gemm-size', '64'])


def test_paper_speeds_are_read_from_the_maps_notes():
    from vitbench.results.paper_speed import paper_speeds, speed_of
    assert speed_of('pre-trained at 192; 831 im/s, peak 2078 MB') == (831.0, 2078.0)
    assert speed_of('1415.1 im/s') == (1415.1, None) and speed_of('drop path 0.3') is None
    speeds = {s.model: s for s in paper_speeds('thesis:6.8')}
    assert speeds['DeiT III ViT-L↑384'].img_size == 384
    assert speeds['DeiT III ViT-H'].variant == 'deit3_huge_patch14_224'
    assert len(paper_speeds('thesis:6.7')) == 7
