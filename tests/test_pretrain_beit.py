"""BEiT's masked image modelling (pretrain/beit.py, beit_data.py, beit_tokenizer.py): the loss against a hand
computation (targets only at masked positions), the [MASK] token written over the stem's outputs before the
positions, the shared relative position bias exported per block, BEiT's initialisation, both tokenizers (the
k-means fit against scikit-learn, the DALL-E encoder's official parameter names, the one-line refusals), the
two-view data step, the configs, and the demo recipe through tools/beit_tokenizer.py and tools/train.py into a
backbone.pth that BEiT's fine-tune loads."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from PIL import Image
from safetensors.torch import load_file

import pretrain  # noqa: F401  (registers the recipe)
from backbones import create_model
from backbones.checkpoint import save_checkpoint
from harness import demo_data
from pretrain.beit import BEiT, masked_token_loss
from pretrain.beit_data import BEiTMaskedViews
from pretrain.beit_tokenizer import DALLETokenizer, KMeansTokenizer, fit_kmeans, nearest, save_codebook
from pretrain.mae import patchify
from vitbench.registry import MODELS

REPO = Path(__file__).resolve().parents[1]
DEMO = 'vit_demo_patch8_64'
BEIT_BACKBONE = dict(type='vitbench.VisionTransformer', arch=DEMO, init_values=0.1, rel_pos_bias=True, depth=2)


@pytest.fixture
def codebook_file(tmp_path):
    """A 16-token codebook of 4x4 patches (the demo's 32 px tokenizer view on the 8x8 patch grid)."""
    path = str(tmp_path / 'kmeans_16.pth')
    save_codebook(path, torch.randn(16, 48, generator=torch.Generator().manual_seed(0)), 4, 0, 1)
    return path


def build_beit(codebook_file, **kwargs):
    init_default_scope('vitbench')
    return MODELS.build(dict(type='BEiT', backbone=dict(BEIT_BACKBONE, **kwargs.pop('backbone', {})),
                             tokenizer=dict(type='KMeansTokenizer', checkpoint=codebook_file), **kwargs))


def test_loss_is_cross_entropy_over_the_masked_patches_only():
    logits = torch.tensor([[[2., 0., 0.], [0., 1., 0.], [5., 5., 5.]]])  # 1 image, 3 patches, vocab 3
    tokens = torch.tensor([[0, 2, 1]])
    mask = torch.tensor([[True, True, False]])
    loss, acc = masked_token_loss(logits, tokens, mask)
    by_hand = (-math.log(math.exp(2) / (math.exp(2) + 2)) - math.log(1 / (math.e + 2))) / 2
    assert loss.item() == pytest.approx(by_hand, rel=1e-6) and acc.item() == 0.5
    logits[0, 2] = torch.tensor([-9., 9., 0.])  # an unmasked patch's prediction never counts
    assert masked_token_loss(logits, tokens, mask)[0].item() == pytest.approx(by_hand, rel=1e-6)


def test_the_mask_token_replaces_the_stem_output_before_the_positions(codebook_file):
    model = build_beit(codebook_file, abs_pos_embed=True).eval()
    vit = model.backbone
    torch.nn.init.normal_(vit.pos_embed, std=1.)
    imgs = torch.randn(2, 3, 64, 64)
    mask = torch.zeros(2, 64, dtype=torch.bool)
    mask[0, [3, 10, 63]] = True
    first = next(vit.iter_hidden(imgs, masked=mask, mask_token=model.mask_token)).tokens
    plain = next(vit.iter_hidden(imgs)).tokens
    patch_pos = vit.pos_embed[0, 1:]
    torch.testing.assert_close(first[0, 1:][mask[0]], (model.mask_token[0, 0] + patch_pos[mask[0]]))
    torch.testing.assert_close(first[:, 1:][~mask], plain[:, 1:][~mask])
    torch.testing.assert_close(first[:, 0], plain[:, 0])  # the class token is never masked
    assert model.logits(imgs, mask).shape == (2, 64, 16)


def test_shared_rel_pos_bias_is_one_table_exported_into_every_block(codebook_file, tmp_path):
    model = build_beit(codebook_file)
    tables = [n for n, _ in model.backbone.named_parameters(remove_duplicate=False) if 'relative_position' in n]
    assert len(tables) == 2 and sum('relative_position' in n for n, _ in model.named_parameters()) == 1
    assert not model.backbone.pos_embed.requires_grad and not model.backbone.pos_embed.any()  # no absolute positions
    with torch.no_grad():
        model.backbone.get_parameter(tables[0]).normal_()
    path = save_checkpoint(tmp_path / 'backbone.pth', model.backbone, arch=DEMO,
                           overrides=dict(model.backbone_overrides), safetensors=True)
    state = load_file(str(tmp_path / 'backbone.safetensors'))  # safetensors refuses tensors that share memory
    torch.testing.assert_close(state[tables[0]], state[tables[1]])
    loaded = create_model(DEMO, checkpoint=path, **model.backbone_overrides)
    torch.testing.assert_close(loaded.get_parameter(tables[1]), model.backbone.get_parameter(tables[0]))
    with pytest.raises(ValueError, match='rel_pos_bias=True'):
        build_beit(codebook_file, backbone=dict(rel_pos_bias=False))


def test_beit_initialisation_rescales_the_residual_projections(codebook_file):
    torch.manual_seed(0)
    model = build_beit(codebook_file)
    for name in ('attn.proj.weight', 'mlp.fc2.weight'):  # std 0.02 truncated at one std, / sqrt(2 l) in block l
        std = [model.backbone.get_parameter(f'blocks.{i}.{name}').std().item() for i in range(2)]
        truncated = .02 * math.sqrt(1 - 2 * math.exp(-.5) / math.sqrt(2 * math.pi) / .6827)
        assert std == pytest.approx([truncated / math.sqrt(2), truncated / 2], rel=.05)
    assert model.mask_token.abs().max() <= .02 and model.mask_token.std() > .005


def test_kmeans_matches_scikit_learn_and_is_deterministic():
    from sklearn.cluster import KMeans
    gen = torch.Generator().manual_seed(1)
    centres = torch.tensor([[0., 0.], [10., 0.], [0., 10.], [10., 10.]])
    points = (centres[:, None] + torch.randn(4, 50, 2, generator=gen)).reshape(-1, 2)
    ours = fit_kmeans(points, 4, seed=3)
    theirs = torch.tensor(KMeans(4, n_init=1, random_state=0).fit(points.numpy()).cluster_centers_, dtype=torch.float)
    key = lambda c: c[torch.argsort(c[:, 0] * 100 + c[:, 1])]  # noqa: E731
    torch.testing.assert_close(key(ours), key(theirs), atol=1e-4, rtol=0)
    torch.testing.assert_close(fit_kmeans(points, 4, seed=3), ours, atol=0, rtol=0)
    with pytest.raises(ValueError, match='vocabulary of 300'):
        fit_kmeans(points, 300)


def test_a_patch_gets_its_nearest_centroid(tmp_path):
    codebook = torch.stack([torch.full((12,), -1.), torch.full((12,), 1.)])  # dark and bright 2x2 patches
    path = str(tmp_path / 'two.pth')
    save_codebook(path, codebook, 2, 0, 1)
    image = torch.full((1, 3, 4, 4), -0.75)
    image[..., :2, 2:] = 0.5  # the top-right patch is bright
    assert KMeansTokenizer(path).tokens(image).tolist() == [[[0, 1], [0, 0]]]
    assert patchify(image, 2)[0, 1].tolist() == [0.5] * 12
    assert nearest(torch.zeros(1, 12), codebook).item() == 0  # a tie: the lower index


def test_tokenizer_files_are_refused_in_one_line(tmp_path, codebook_file):
    with pytest.raises(FileNotFoundError, match=r"KMeansTokenizer: checkpoint '.*nope.pth' does not exist .*tools/"
                                                r'beit_tokenizer.py'):
        KMeansTokenizer(str(tmp_path / 'nope.pth'))
    with pytest.raises(ValueError, match='fitted with vocab_size=16, the config says 8192'):
        KMeansTokenizer(codebook_file, vocab_size=8192)
    with pytest.raises(FileNotFoundError, match="DALLETokenizer: checkpoint '.*dall_e.pth' does not exist .*state"):
        DALLETokenizer(str(tmp_path / 'dall_e.pth'))
    with pytest.raises(ValueError, match='DALLETokenizer: give checkpoint'):
        DALLETokenizer()


def test_dalle_tokenizer_has_the_official_encoder_layout(tmp_path):
    """openai/DALL-E dall_e/encoder.py (as vendored in microsoft/unilm beit/dall_e): names and shapes."""
    encoder = DALLETokenizer(load=False, n_hid=64, vocab_size=512)
    shapes = {k: tuple(v.shape) for k, v in encoder.state_dict().items()}
    assert shapes['blocks.input.w'] == (64, 3, 7, 7)
    assert shapes['blocks.group_1.block_1.res_path.conv_1.w'] == (16, 64, 3, 3)
    assert 'blocks.group_1.block_1.id_path.w' not in shapes  # same width: identity
    assert shapes['blocks.group_2.block_1.id_path.w'] == (128, 64, 1, 1)
    assert shapes['blocks.group_4.block_2.res_path.conv_4.w'] == (512, 128, 1, 1)
    assert shapes['blocks.output.conv.w'] == (512, 512, 1, 1)
    assert len(shapes) == 74  # w and b of: the input conv, 8 blocks x 4 convs, 3 id paths, the output conv
    assert encoder.blocks.group_1.block_1.post_gain == 1 / 64  # 1 / n_layers^2, n_layers = 4 groups x 2
    path = str(tmp_path / 'dall_e.pth')
    torch.save(encoder.state_dict(), path)
    image = torch.rand(1, 3, 32, 32) * 2 - 1
    loaded = DALLETokenizer(path, n_hid=64, vocab_size=512)
    assert loaded.tokens(image).shape == (1, 4, 4) and torch.equal(loaded.tokens(image), encoder.tokens(image))
    torch.save({'blocks.input.w': torch.zeros(64, 3, 7, 7)}, path)
    with pytest.raises(ValueError, match='not a DALL-E encoder of this size: missing'):
        DALLETokenizer(path, n_hid=64, vocab_size=512)


def test_the_two_views_are_one_crop_and_the_mask_is_beits():
    left_red = np.zeros((100, 200, 3), dtype=np.uint8)
    left_red[:, :100, 0] = 255
    step = BEiTMaskedViews(size=224, second_size=112, scale=(1., 1.), ratio=(2., 2.), seed=0)  # the whole image
    out = step(dict(img=Image.fromarray(left_red)))
    big, small = (np.asarray(v, dtype=np.float32) for v in out['img'])
    assert big.shape == (224, 224, 3) and small.shape == (112, 112, 3)
    assert big[:, :100, 0].min() > 250 and small[:, :50, 0].min() > 250 and small[:, 62:, 0].max() < 5
    mask = out['beit_mask']
    assert mask.shape == (14, 14) and mask.sum() <= 75 and mask.sum() >= 60  # 75 of 196 blocks of >= 16


def test_configs_resolve_and_the_recipe_builds(codebook_file):
    pre = Config.fromfile(str(REPO / 'configs/pretrain/beit_three_things_b12_in1k_300e.py'))
    assert pre.experiment.pretrain.tokenizer == f"kmeans-{pre.model.tokenizer.vocab_size}"
    assert (pre.optim_wrapper.optimizer.lr, pre.optim_wrapper.clip_grad.max_norm, pre.train_cfg.max_epochs) == \
        (1.5e-3, 3.0, 300)
    demo = Config.fromfile(str(REPO / 'configs/demo/beit_demo.py'))
    model = dict(demo.model, tokenizer=dict(type='KMeansTokenizer', checkpoint=codebook_file), backbone=dict(
        demo.model.backbone, depth=2))
    init_default_scope('vitbench')
    beit = MODELS.build(model)
    assert isinstance(beit, BEiT) and beit.backbone.blocks[0].ls1.gamma.detach().eq(0.1).all()
    with torch.device('meta'):
        MODELS.build(dict(pre.model, tokenizer=dict(type='KMeansTokenizer', checkpoint=codebook_file)))
    ft = Config.fromfile(str(REPO / 'configs/finetune/beit_three_things_b12_ft_100e.py'))
    assert (ft.paramwise_cfg if 'paramwise_cfg' in ft else ft.optim_wrapper.paramwise_cfg).layer_decay_rate == 0.65


def test_a_few_steps_on_one_batch_lower_the_loss(codebook_file):
    torch.manual_seed(0)
    model = build_beit(codebook_file, backbone=dict(drop_path_rate=0.))
    imgs, view = torch.randn(4, 1, 3, 64, 64), torch.randn(4, 1, 3, 32, 32)
    mask = torch.zeros(4, 8, 8)
    mask[:, 2:6, 1:5] = 1
    optim = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(8):
        loss = model.loss([imgs, view], dict(beit_mask=mask))['loss']
        optim.zero_grad()
        loss.backward()
        optim.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0], losses


@pytest.fixture(scope='module')
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def test_demo_fits_its_tokenizer_pretrains_and_feeds_the_finetune(data_root, tmp_path, checkpoint_policy):
    """tools/beit_tokenizer.py then configs/demo/beit_demo.py through tools/train.py (2 epochs of 5 iterations on
    the tiny demo data), then 4 iterations of configs/demo/beit_finetune_demo.py from its backbone.pth."""
    env = dict(os.environ, OMP_NUM_THREADS='1')
    tokenizer = str(tmp_path / 'kmeans_16.pth')
    data = [f'train_dataloader.dataset.data_root={data_root}', 'train_dataloader.dataset.indices=40',
            'train_dataloader.num_workers=0', 'train_dataloader.batch_size=8']
    common = data + [f'model.tokenizer.checkpoint={tokenizer}', 'model.tokenizer.vocab_size=16',
                     'model.tokenizer.max_images=20', 'model.backbone.depth=2',
                     'experiment.pretrain.tokenizer=kmeans-16']
    fit = subprocess.run([sys.executable, 'tools/beit_tokenizer.py', 'configs/demo/beit_demo.py', '--cfg-options',
                          *common], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert fit.returncode == 0 and torch.load(tokenizer)['codebook'].shape == (16, 48), fit.stderr[-2000:]

    work_dir = tmp_path / 'beit'
    options = common + ['train_cfg.max_epochs=2', 'param_scheduler.1.end=2', 'default_hooks.logger.interval=1',
                        'default_hooks.checkpoint.interval=2', 'experiment.pretrain.epochs=2',
                        'experiment.backbone_overrides.depth=2']
    run = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/beit_demo.py', '--work-dir',
                          str(work_dir), '--cfg-options', *options], cwd=REPO, capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    logged = [json.loads(line) for line in next(work_dir.glob('*/vis_data/scalars.json')).read_text().splitlines()]
    assert len(logged) == 10 and all(math.isfinite(s['loss']) and 0 <= s['mlm_acc'] <= 1 for s in logged)
    record = json.loads((work_dir / 'result.json').read_text())
    assert record['pretrain']['recipe'] == 'beit' and record['pretrain']['tokenizer'] == 'kmeans-16'
    exported = torch.load(work_dir / 'backbone.pth')
    assert exported['meta']['pretrain'] == dict(recipe='beit', epochs=2, tokenizer='kmeans-16',
                                                model=dict(depth=2, init_values=0.1, rel_pos_bias=True))
    state = exported['state_dict']
    assert not any(k.startswith(('mask_token', 'lm_head', 'tokenizer')) for k in state)
    torch.testing.assert_close(state['blocks.0.attn.relative_position_bias_table'],
                               state['blocks.1.attn.relative_position_bias_table'])

    ft_dir = tmp_path / 'ft'
    ft = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/beit_finetune_demo.py', '--work-dir',
                         str(ft_dir), '--checkpoint', str(work_dir / 'backbone.pth'), '--cfg-options', *data,
                         f'val_dataloader.dataset.data_root={data_root}', 'val_dataloader.dataset.indices=16',
                         'val_dataloader.num_workers=0', 'model.backbone.depth=2', 'train_cfg.max_epochs=2',
                         'train_cfg.val_interval=2', 'train_dataloader.dataset.indices=16', 'param_scheduler.1.end=2'],
                        cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert ft.returncode == 0, ft.stdout[-2000:] + ft.stderr[-3000:]
    ft_record = json.loads((ft_dir / 'result.json').read_text())
    assert ft_record['pretrain']['recipe'] == 'beit' and ft_record['pretrain']['tokenizer'] == 'kmeans-16'
