"""``test_crop_ratio``: the evaluation crop as one config key (harness/experiment/test_crop.py; CaiT Table 4, thesis
Table 3.22), applied to the val and test pipelines of a real config, and refused in one line when it cannot be."""
from pathlib import Path

import pytest
from mmengine.config import Config

from harness.experiment.test_crop import apply_test_crop_ratio

REPO = Path(__file__).resolve().parents[1]


def crops(cfg):
    return [t['crop_pct'] for loader in ('val_dataloader', 'test_dataloader')
            for t in cfg[loader].dataset.pipeline if t['type'] == 'ResizeCenterCrop']


def test_the_key_sets_every_evaluation_crop():
    cfg = Config.fromfile(str(REPO / 'configs/pretrain/cait_s36_in1k_400e.py'))
    assert cfg.test_crop_ratio == 1.0 and apply_test_crop_ratio(cfg) == 2 and crops(cfg) == [1.0, 1.0]
    cfg.merge_from_dict({'test_crop_ratio': 0.875})
    assert apply_test_crop_ratio(cfg) == 2 and crops(cfg) == [0.875, 0.875]
    cfg.merge_from_dict({'test_img_size': 256})
    assert apply_test_crop_ratio(cfg) == 2 and [t['size'] for t in cfg.val_dataloader.dataset.pipeline
                                                if t['type'] == 'ResizeCenterCrop'] == [256]
    deit = Config.fromfile(str(REPO / 'configs/pretrain/deit_small_in1k_300e.py'))
    before = crops(deit)
    assert apply_test_crop_ratio(deit) == 0 and crops(deit) == before  # absent: nothing changes


def test_a_bad_ratio_or_no_crop_is_one_line():
    cfg = Config(dict(test_crop_ratio=1.5, val_dataloader=dict(dataset=dict(pipeline=[]))))
    with pytest.raises(ValueError, match=r'test_crop_ratio=1.5: expected the crop ratio, a number in \(0, 1\]'):
        apply_test_crop_ratio(cfg)
    cfg.test_crop_ratio = None
    cfg.test_img_size = 25.6
    with pytest.raises(ValueError, match='test_img_size=25.6: expected the evaluation crop side in pixels'):
        apply_test_crop_ratio(cfg)
    cfg.test_img_size = None
    cfg.test_crop_ratio = 0.9
    with pytest.raises(ValueError, match='no ResizeCenterCrop'):
        apply_test_crop_ratio(cfg)


def test_the_keys_are_cfg_options_something_reads():
    # the config check refuses a top-level option nothing reads: these two the evaluation pipelines read
    from harness.experiment.config_checks import config_problems
    cfg = Config.fromfile(str(REPO / 'configs/pretrain/cait_s36_in1k_400e.py'))
    keys = set(cfg.keys())
    options = {'test_crop_ratio': 0.875, 'test_img_size': 256}
    cfg.merge_from_dict(options)
    assert not [p for p in config_problems(cfg, options, keys) if 'test_' in p]
