"""UperNet trains and evaluates on the tiny demo ADE20k: through tools/train.py's runner (DeiT III ViT,
result.json), through mmseg's own entry (Runner.from_cfg; CaiT), with multi-scale + flip TTA
(tools/test.py --tta); a missing backbone checkpoint stops training with its path."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import mmseg
import pytest
from mmengine.config import Config
from mmengine.runner import Runner

import downstream  # noqa: F401
from _tool_helpers import RESULT_SCHEMA_KEYS
from downstream.backbone_swap import swap_backbone
from harness import demo_data
from harness.experiment.cli import build_runner

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / 'configs' / 'demo' / 'upernet_demo.py'
LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')


@pytest.fixture(scope='module')
def tiny_ade(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['ade20k']), str(root), seed=0, scale='tiny', workers=1,
                              log=lambda message: None) == []
    return root / 'ade20k' / 'ADEChallengeData2016'


def data_options(data_root) -> dict:
    """--cfg-options pointing the demo config at ``data_root``, in the main process, 2 images a batch,
    evaluating on the first 2 validation images."""
    options = {'train_dataloader.batch_size': 2, 'val_dataloader.dataset.indices': 2,
               'test_dataloader.dataset.indices': 2}
    for loader in LOADERS:
        options.update({f'{loader}.dataset.data_root': str(data_root), f'{loader}.num_workers': 0,
                        f'{loader}.persistent_workers': False})
    return options


def one_iteration_cfg(data_root, work_dir, backbone=None) -> Config:
    cfg = Config.fromfile(DEMO)
    cfg.merge_from_dict(dict(data_options(data_root), **{
        'train_cfg.max_iters': 1, 'train_cfg.val_interval': 1, 'default_hooks.logger.interval': 1}))
    if backbone:
        swap_backbone(cfg, backbone)
    cfg.work_dir = str(work_dir)
    return cfg


@pytest.fixture(scope='module')
def vit_run(tiny_ade, tmp_path_factory):
    """One train + one val iteration of a DeiT III ViT (the demo size) through tools/train.py's runner."""
    work_dir = tmp_path_factory.mktemp('vit')
    cfg = one_iteration_cfg(tiny_ade, work_dir)
    # the architecture of the deit3_* variants: LayerScale, patch-only position embeddings, uniform drop path
    cfg.model.backbone.update(init_values=1e-4, no_embed_class=True, drop_path_uniform=True,
                              drop_path_rate=0.1)
    build_runner(cfg).train()
    return work_dir


def read_result(work_dir: Path) -> dict:
    def refuse(constant):
        raise ValueError(f'result.json holds {constant}, which is not JSON')
    return json.loads((work_dir / 'result.json').read_text(), parse_constant=refuse)


def test_vit_trains_an_iteration_and_records_the_result(vit_run):
    record = read_result(vit_run)
    assert set(record) == RESULT_SCHEMA_KEYS
    assert (record['task'], record['dataset'], record['backbone'], record['eval']) == \
        ('seg', 'ade20k-demo', 'vit_demo_patch8_64', 'ss')
    assert record['pretrain'] == dict(recipe='scratch', epochs=0, checkpoint=None)
    metrics = record['metrics']
    assert {'mIoU', 'mAcc', 'aAcc', 'loss'} <= set(metrics)
    per_class = {name[len('IoU.'):]: value for name, value in metrics.items() if name.startswith('IoU.')}
    assert 'sky' in per_class and set(per_class) <= set(mmseg.datasets.ADE20KDataset.METAINFO['classes'])
    assert all(isinstance(v, float) and 0 <= v <= 100 for v in metrics.values() if v is not metrics['loss'])
    assert (vit_run / 'iter_1.pth').is_file()


def test_cait_trains_an_iteration_through_mmseg_s_own_entry(tiny_ade, tmp_path):
    cfg = one_iteration_cfg(tiny_ade, tmp_path, backbone='cait_xxs24_224')
    runner = Runner.from_cfg(cfg)  # what mmseg's tools/train.py does: no vitbench tooling involved
    runner.train()
    assert type(runner.model.backbone).__name__ == 'CaiTBackbone'
    assert runner.message_hub.get_scalar('val/mIoU') is not None and (tmp_path / 'iter_1.pth').is_file()


@pytest.fixture(scope='module')
def tools_test():
    spec = importlib.util.spec_from_file_location('vitbench_test_tool', REPO / 'tools' / 'test.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tta_tests_multi_scale_with_flip(tools_test, vit_run, tiny_ade, tmp_path):
    options = [f'{k}={v}' for k, v in data_options(tiny_ade).items()]
    tools_test.main([str(DEMO), str(vit_run / 'iter_1.pth'), '--tta', '--work-dir', str(tmp_path),
                    '--cfg-options', *options])
    record = read_result(tmp_path / 'eval' / 'iter_1')  # tools/test.py's own record (issue 46.1)
    assert record['eval'] == 'ms' and 'mIoU' in record['metrics']
    log = next(tmp_path.glob('eval/iter_1/*/*.log')).read_text()
    assert 'SegTTAModel' in log and 'TestTimeAug' in log


def test_tta_needs_the_config_s_tta_parts(tools_test):
    cfg = Config(dict(model=dict(type='EncoderDecoder'), tta_model=dict(type='SegTTAModel')))
    with pytest.raises(tools_test.ConfigError, match='has no tta_pipeline'):
        tools_test.use_tta(cfg)


def test_a_missing_backbone_checkpoint_stops_training_with_its_path(tiny_ade, tmp_path):
    cfg = one_iteration_cfg(tiny_ade, tmp_path)
    missing = tmp_path / 'nowhere' / 'backbone.pth'
    cfg.model.backbone.init_cfg = dict(type='Pretrained', checkpoint=str(missing))
    runner = build_runner(cfg)  # builds without the file (configs and tests need no checkpoint)
    with pytest.raises(FileNotFoundError, match='nowhere/backbone.pth'):
        runner.train()
    assert not list(tmp_path.glob('iter_*.pth'))


@pytest.mark.slow
def test_mmseg_s_train_script_runs_the_demo_config(tiny_ade, tmp_path):
    script = Path(mmseg.__file__).parent / '.mim' / 'tools' / 'train.py'
    if not script.is_file():
        pytest.skip(f'mmseg installed without its tools ({script})')
    options = [f'{k}={v}' for k, v in data_options(tiny_ade).items()]
    result = subprocess.run(
        [sys.executable, str(script), str(DEMO), '--work-dir', str(tmp_path), '--cfg-options',
         'train_cfg.max_iters=2', 'train_cfg.val_interval=2', *options],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / 'iter_2.pth').is_file() and 'mIoU' in result.stdout + result.stderr
