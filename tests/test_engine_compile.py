"""tools/train.py --compile (vitbench.engine.compile): a compiled demo run logs the losses of the eager run of the
same seed and records what it compiled; detection compiles its backbone in place."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from mmengine.config import ConfigDict
from mmengine.optim import OptimWrapper
from torch import nn

from harness import demo_data
from vitbench.engine.compile import EagerOptimizerStep, compile_backbone

REPO = Path(__file__).resolve().parents[1]


def test_compile_backbone_compiles_the_training_forward_in_place_and_keeps_parameter_names():
    model = nn.Sequential()
    model.backbone, model.head = nn.Linear(4, 4), nn.Linear(4, 2)
    names = list(model.state_dict())
    compile_backbone(SimpleNamespace(model=model), dict(backend='eager'))
    x = torch.randn(2, 4)
    counters = torch._dynamo.utils.counters
    counters.clear()
    model.backbone.eval()
    eval_out = model.backbone(x)  # eager: validation and testing are not compiled
    assert counters['frames']['total'] == 0
    model.backbone.train()
    torch.testing.assert_close(model.backbone(x), eval_out)
    assert counters['frames']['total'] > 0  # dynamo traced the training forward
    assert list(model.state_dict()) == names  # checkpoints and backbone.pth as in an eager run
    with pytest.raises(ValueError, match='has no backbone to compile'):
        compile_backbone(SimpleNamespace(model=nn.Linear(2, 2)), {})


def test_eager_optimizer_step_keeps_update_params_out_of_the_compiled_step():
    model = nn.Linear(4, 2)
    groups = [ConfigDict(params=[model.weight], lr=0.1), ConfigDict(params=[model.bias], lr=0.0)]  # what mmengine builds
    wrapper = OptimWrapper(optimizer=torch.optim.SGD(groups, lr=0.1))
    EagerOptimizerStep().before_train(SimpleNamespace(optim_wrapper=wrapper))
    assert wrapper.update_params._torchdynamo_disable

    @torch.compile(backend='eager')  # dynamo only: traces the loss, leaves the step to eager
    def train_step(x):
        wrapper.update_params(model(x).square().mean())

    weight, bias = model.weight.detach().clone(), model.bias.detach().clone()
    train_step(torch.randn(3, 4))  # traced, the ConfigDict groups broke dynamo (torch 2.14)
    assert not torch.equal(model.weight, weight) and torch.equal(model.bias, bias)


@pytest.fixture(scope='module')
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def _train(work_dir, data_root, *extra):
    """configs/demo/sup_demo.py for 5 iterations of 8 tiny demo images, one thread; the logged losses."""
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={data_root}', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=40')]
    options += ['train_dataloader.batch_size=8', 'val_dataloader.batch_size=10', 'train_cfg.max_epochs=1',
                'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1', 'default_hooks.logger.interval=1',
                'randomness.seed=0']
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/sup_demo.py', '--work-dir',
                             str(work_dir), *extra, '--cfg-options', *options], cwd=REPO, capture_output=True,
                            text=True, timeout=900, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    scalars = next(Path(work_dir).glob('*/vis_data/scalars.json')).read_text().splitlines()
    losses = [json.loads(line)['loss'] for line in scalars if '"loss"' in line]
    return losses, json.loads((Path(work_dir) / 'result.json').read_text())


@pytest.mark.slow
def test_compiled_demo_run_logs_the_eager_losses(data_root, tmp_path):
    eager, eager_record = _train(tmp_path / 'eager', data_root)
    compiled, record = _train(tmp_path / 'compiled', data_root, '--compile')  # ~45 s of compiling on one core
    assert len(eager) == len(compiled) == 5
    assert compiled == pytest.approx(eager, rel=1e-4)
    assert record['cost']['compiled'] == 'train_step' and eager_record['cost']['compiled'] is None
    assert record['cost']['precision'] == eager_record['cost']['precision'] == 'fp32'
    assert record['metrics']['top1'] == pytest.approx(eager_record['metrics']['top1'], abs=2.0)  # 50 images
