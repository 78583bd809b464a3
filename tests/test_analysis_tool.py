"""tools/analyze.py end to end: a tiny random backbone.pth, the same weights in MAE-lite's official format and an
untrained model, on a few generated images in ImageFolder layout; then the keep-blocks plot mode."""
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from backbones import create_model, save_checkpoint

REPO = Path(__file__).resolve().parents[1]
ARCH = 'vit_demo_patch8_64'
PNG = b'\x89PNG\r\n\x1a\n'

sys.path.insert(0, str(Path(__file__).parent))
from _backbone_helpers import mae_lite_official, randomize  # noqa: E402


def _analyze(*args):
    return subprocess.run([sys.executable, 'tools/analyze.py', *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


def _main():
    """tools/analyze.py's main(), run in this process (the end-to-end test runs the script itself)."""
    spec = importlib.util.spec_from_file_location('analyze_tool', REPO / 'tools' / 'analyze.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda *args: module.main([str(a) for a in args])


@pytest.fixture(scope='module')
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp('analysis')
    rng = np.random.default_rng(0)
    for c in range(2):
        (root / 'val' / f'class{c}').mkdir(parents=True)
        for i in range(6):
            ys, xs = np.mgrid[0:72, 0:72]
            stripes = (np.sin(xs / (2 + 3 * c) + i) * 100 + 128)[..., None] * np.array([1, 0.5 + c / 2, 0.3])
            img = np.clip(stripes + rng.normal(0, 20, (72, 72, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(img).save(root / 'val' / f'class{c}' / f'{i}.png')
    model = randomize(create_model(ARCH, num_classes=0), seed=1)
    own = save_checkpoint(str(root / 'backbone.pth'), model)
    official = root / 'mae_lite_official.pth'
    torch.save(mae_lite_official(model.state_dict()), official)
    return root, own, official


def test_analyze_writes_every_figure_and_the_numbers(inputs, tmp_path):
    root, own, official = inputs
    out = tmp_path / 'out'
    result = _analyze('all', '--models', f'ours={own}', f'official={official}@{ARCH}', f'untrained=random@{ARCH}',
                      '--images', root / 'val', '--out', out, '--num-images', 10, '--batch-size', 5)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ('cka', 'cka_diagonal', 'attention', 'fourier'):
        assert (out / f'{name}.png').read_bytes()[:8] == PNG, name

    cka = json.loads((out / 'cka.json').read_text())
    assert cka['images'] == 10 and cka['models']['official'] == dict(checkpoint=str(official), arch=ARCH)
    pairs = {(p['a'], p['b']): np.array(p['matrix']) for p in cka['pairs']}
    assert set(pairs) == {('ours', 'ours'), ('ours', 'official'), ('ours', 'untrained'), ('official', 'official'),
                          ('official', 'untrained'), ('untrained', 'untrained')}
    assert pairs['ours', 'ours'].shape == (7, 7)  # patch embedding + 6 blocks
    assert np.allclose(np.diag(pairs['ours', 'ours']), 1.0)
    # the same weights read from the official format: the same representations, layer for layer
    assert np.allclose(pairs['ours', 'official'], pairs['ours', 'ours'], atol=1e-6)
    assert np.abs(pairs['ours', 'untrained'] - pairs['ours', 'ours']).max() > 1e-3  # another model: other values

    attention = json.loads((out / 'attention.json').read_text())['models']
    for label, stats in attention.items():
        assert stats['grid'] == [8, 8] and stats['patch_size'] == 8 and stats['layers'] == [1, 2, 3, 4, 5, 6]
        assert np.array(stats['entropy']).shape == (6, 3)  # layers x heads
        assert np.all(np.array(stats['entropy']) <= math.log(64) + 1e-9)
        assert np.all(np.array(stats['distance']) <= 8 * math.hypot(7, 7))
    # an untrained ViT attends almost uniformly: entropy ~ log(64) patches; the randomised one does not
    assert np.array(attention['untrained']['entropy']).min() > math.log(64) - 0.05
    assert np.array(attention['ours']['entropy']).min() < math.log(64) - 0.2

    fourier = json.loads((out / 'fourier.json').read_text())['models']['ours']
    assert fourier['frequencies_pi'] == [0.0, 0.25, 0.5, 0.75, 1.0] and fourier['layers'] == list(range(7))
    assert len(fourier['delta_log_amplitude']) == 7
    assert all(curve[0] == 0 for curve in fourier['relative_log_amplitude'])


def test_analyze_bad_inputs_are_one_line(inputs, tmp_path, capsys):
    root, own, official = inputs
    analyze = _main()
    for args, message in (
            (('cka', '--models', own), 'is not LABEL=PATH'),
            (('fourier', '--models', f'x={official}'), 'does not record its backbone variant; name it as x='),
            (('fourier', '--models', f'x=random@vit_demo'), "unknown backbone 'vit_demo'"),
            (('fourier', '--models', f'x={own}', f'x={own}'), 'labels must differ')):
        assert analyze(*args, '--images', root / 'val', '--out', tmp_path) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert analyze('fourier', '--models', f'x={own}', '--images', root, '--out', tmp_path) == 2
    assert "holds the splits ['val']: give one of them" in capsys.readouterr().err


def test_keep_blocks_plot_mode(tmp_path):
    for k, top1 in ((0, 55.0), (2, 70.0), (None, 75.0)):
        run = tmp_path / 'runs' / f'k{k}'
        run.mkdir(parents=True)
        pretrain = dict(recipe='mae', epochs=3, checkpoint=None, **({} if k is None else dict(keep_blocks=k)))
        run.joinpath('result.json').write_text(json.dumps(dict(
            task='finetune', dataset='imagenet', backbone=ARCH, backbone_overrides={}, pretrain=pretrain,
            metrics=dict(top1=top1, top5=90.0), eval='ss', params_M=2.7, gflops=0.2, seed=0, cost=None,
            config='c.py', git_commit=None, created='2026-01-01T00:00:00+00:00')))
    assert _main()('keep-blocks', tmp_path / 'runs', '--out', tmp_path / 'out') == 0
    assert (tmp_path / 'out' / 'keep_blocks.png').read_bytes()[:8] == PNG
    series = json.loads((tmp_path / 'out' / 'keep_blocks.json').read_text())['datasets']['imagenet']['series']
    assert series == {'mae': {'0': 55.0, '2': 70.0, '6': 75.0}}


def test_a_run_folder_stands_for_its_backbone_or_its_first_seeds(inputs, tmp_path):
    from downstream.analysis.models import resolve_run_folder
    _, own, _ = inputs
    for k in (10, 2):
        (tmp_path / 'run' / f'seed{k}').mkdir(parents=True)
        (tmp_path / 'run' / f'seed{k}' / 'backbone.pth').write_bytes(Path(own).read_bytes())
    assert resolve_run_folder('m', str(tmp_path / 'run')) == str(tmp_path / 'run' / 'seed2' / 'backbone.pth')
    (tmp_path / 'run' / 'backbone.pth').write_bytes(b'')
    assert resolve_run_folder('m', str(tmp_path / 'run')) == str(tmp_path / 'run' / 'backbone.pth')
    with pytest.raises(FileNotFoundError, match="--models m: the folder .* holds no backbone.pth"):
        resolve_run_folder('m', str(tmp_path))


def test_residual_ratios_per_block_through_the_tool(inputs, tmp_path):
    # CaiT Figure 4: per block, the attention and FFN ratios of every model given
    root, own, _ = inputs
    out = tmp_path / 'residual'
    rc = _main()('residual', '--models', f'ours={own}', f'untrained=random@{ARCH}', '--images', root / 'val',
                 '--out', out, '--num-images', 4, '--batch-size', 2)
    assert rc == 0
    ratios = json.loads((out / 'residual.json').read_text())['models_ratios']
    assert set(ratios) == {'ours', 'untrained'}
    for r in ratios.values():
        assert len(r['attn']) == len(r['ffn']) == 6 and all(v > 0 for v in r['attn'] + r['ffn'])


def test_an_epoch_checkpoint_builds_as_its_runs_backbone_records(tmp_path):
    """CaiT Figure 4 shades its curves by epoch: a run's epoch_N.pth (mmengine's, the classifier's keys) names no
    model; beside the run's backbone.pth it builds as that records, a depth override included."""
    from downstream.analysis.models import load_model
    run = tmp_path / 'run'
    run.mkdir()
    final = randomize(create_model(ARCH, num_classes=0, depth=3), seed=2)
    save_checkpoint(str(run / 'backbone.pth'), final, arch=ARCH, overrides=dict(depth=3))
    earlier = randomize(create_model(ARCH, num_classes=0, depth=3), seed=3)
    torch.save({'meta': {'epoch': 1}, 'state_dict': {f'backbone.{k}': v for k, v in earlier.state_dict().items()}},
               run / 'epoch_1.pth')
    loaded = load_model('e1', str(run / 'epoch_1.pth'))
    assert (loaded.arch, len(loaded.model.blocks)) == (ARCH, 3)
    assert all(torch.equal(v, earlier.state_dict()[k]) for k, v in loaded.model.state_dict().items())
    (run / 'backbone.pth').unlink()  # no export beside it: the variant must be named, in one line
    with pytest.raises(ValueError, match=r'does not record its backbone variant; name it as e1=.*@ARCH'):
        load_model('e1', str(run / 'epoch_1.pth'))
