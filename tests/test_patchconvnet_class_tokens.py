"""PatchConvNet's one class token per class (thesis §5.2 and Table 5.7; official ``S60_multi``): the k class tokens
query the patches only, each class' logit is its own token through its own linear map; checked on hand-computed
numbers, against the official size (25.6M for S60), and in one demo training of the switch."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from backbones import create_model, load_checkpoint, save_checkpoint
from backbones.complexity import count_params
from backbones.layers import ClassAttention, PerClassHead

REPO = Path(__file__).resolve().parents[1]


def _identity_attention(dim=2):
    """One head with identity q / k / v / output projections and zero biases: attention over the raw tokens."""
    attn = ClassAttention(dim, num_heads=1, qkv_bias=True)
    with torch.no_grad():
        for layer in (attn.q, attn.k, attn.v, attn.proj):
            layer.weight.copy_(torch.eye(dim))
            layer.bias.zero_()
    return attn.eval()


def test_class_tokens_per_class_attend_over_the_patches_alone():
    """Class tokens c1 = (1, 0), c2 = (0, 1) over patches (2, 0), (0, 2), (0, 0), scale 1/sqrt(2): c1 scores the
    patches sqrt(2), 0, 0, weighs them e, 1, 1 / (e + 2) with e = exp(sqrt(2)) and pools (2e, 2) / (e + 2); c2
    likewise with x and y swapped. With the class tokens among the keys (CaiT's class attention), c1 would also
    score itself and c2."""
    tokens = torch.tensor([[[1., 0.], [0., 1.], [2., 0.], [0., 2.], [0., 0.]]])
    e = math.exp(math.sqrt(2))
    big, small = 2 * e / (e + 2), 2 / (e + 2)
    out = _identity_attention()(tokens, num_queries=2, queries_in_keys=False)
    torch.testing.assert_close(out, torch.tensor([[[big, small], [small, big]]]))
    # c1 with every token as a key: scores (1, 0, 2, 0, 0) / sqrt(2) over (c1, c2, p1, p2, p3)
    w = torch.tensor([1., 0., 2., 0., 0.]).div(math.sqrt(2)).softmax(0)
    with_queries = _identity_attention()(tokens, num_queries=2)
    torch.testing.assert_close(with_queries[0, 0], w @ tokens[0])


def test_each_class_reads_its_own_token_through_its_own_linear_map():
    head = PerClassHead(2, 2)
    with torch.no_grad():
        head.weight.copy_(torch.tensor([[1., 2.], [3., 4.]]))
        head.bias.copy_(torch.tensor([0.5, -1.]))
    # class 0: <(1, 2), (1, 1)> + 0.5 = 3.5; class 1: <(3, 4), (2, 0)> - 1 = 5
    torch.testing.assert_close(head(torch.tensor([[[1., 1.], [2., 0.]]])), torch.tensor([[3.5, 5.0]]))
    with pytest.raises(ValueError, match=r'expected \(B, 2, 2\) class tokens'):
        head(torch.zeros(1, 3, 2))


def test_the_model_is_the_official_s60_multi():
    """Logits = per-class head over the normalised class tokens, the attention maps are one per class over the
    patches, and S60 has the official S60_multi's 25.6M parameters (README_patchconvnet.md; 25.2M + 1000 x 384)."""
    torch.manual_seed(0)
    model = create_model('patchconvnet_demo_64', num_classes=5, depth=2, class_token_per_class=True).eval()
    assert model.cls_token.shape == (1, 5, 192) and not model.blocks_token_only[0].queries_in_keys
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        tokens = model.forward_features(x, prefix_only=True)  # (B, classes, C), final norm applied
        logits = model(x)
    assert tokens.shape == (2, 5, 192)
    torch.testing.assert_close(logits, (tokens * model.head.weight).sum(-1) + model.head.bias)
    (maps,) = model.forward_attention(x)
    assert maps.shape == (2, 1, 5, 64)  # a map per class over the 8 x 8 patches, each a softmax over them
    torch.testing.assert_close(maps.sum(-1), torch.ones(2, 1, 5))
    with torch.device('meta'):
        assert round(count_params(create_model('patchconvnet_s60', class_token_per_class=True)) / 1e6, 1) == 25.6
    with pytest.raises(ValueError, match="class_token_per_class=True .* needs global_pool='token'"):
        create_model('patchconvnet_demo_64', global_pool='avg', class_token_per_class=True)


def test_the_switch_round_trips_through_backbone_pth(tmp_path):
    model = create_model('patchconvnet_demo_64', num_classes=5, depth=2, class_token_per_class=True).eval()
    path = save_checkpoint(str(tmp_path / 'backbone.pth'), model, overrides=dict(depth=2, class_token_per_class=True))
    again = create_model('patchconvnet_demo_64', num_classes=5, depth=2, class_token_per_class=True)
    load_checkpoint(again, path, verbose=False)
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(again.eval()(x), model(x), rtol=0, atol=0)


@pytest.fixture(scope='module')
def data_root(tmp_path_factory):
    from harness import demo_data
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def test_demo_training_with_one_class_token_per_class(data_root, tmp_path):
    """Table 5.7's row as the map runs it (the recipe with the switch and its own label), at demo scale: the
    supervised demo on 40 images for one epoch with the demo PatchConvNet, 25 class tokens."""
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={data_root}', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=40')]
    options += ['train_dataloader.batch_size=8', 'val_dataloader.batch_size=20', 'train_cfg.max_epochs=1',
                'train_cfg.val_interval=1', 'val_cfg.extra_sets=[]', 'model.backbone.global_pool=token',
                'model.backbone.depth=2', 'experiment.backbone_overrides.depth=2',
                'model.backbone.class_token_per_class=True', 'experiment.backbone_overrides.class_token_per_class=True',
                'experiment.pretrain.recipe=supervised:one-class-token-per-class']
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/sup_demo.py', '--backbone',
                             'patchconvnet_demo_64', '--work-dir', str(tmp_path), '--cfg-options', *options],
                            cwd=REPO, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    record = json.loads((tmp_path / 'result.json').read_text())
    assert 'top1' in record['metrics'] and np.isfinite(record['metrics']['loss'])
    assert record['pretrain']['recipe'] == 'supervised:one-class-token-per-class'
    exported = create_model('patchconvnet_demo_64', num_classes=25, checkpoint=str(tmp_path / 'backbone.pth'),
                            depth=2, class_token_per_class=True)
    assert exported.cls_token.shape == (1, 25, 192)
