"""ImageNet data for the pre-training recipes: dataset layout and errors, transforms, the repeated-augmentation
sampler, batch Mixup/CutMix, the classification losses and the top-k metric."""
import os
import shutil

import pytest
import torch
from PIL import Image

import pretrain  # noqa: F401  (registers the components)
from harness import demo_data
from pretrain.classifier import ClsLoss, distillation_loss
from pretrain.data import DatasetLayoutError, ImageNet
from pretrain.metrics import Accuracy
from pretrain.preprocessor import ClsDataPreprocessor
from pretrain.samplers import RepeatAugSampler
from pretrain.transforms import ImageReadError, LoadImage
from vitbench.sample_error import SampleError


pytestmark = pytest.mark.usefixtures('vitbench_scope')

TRAIN_PIPELINE = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=32, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='ThreeAugment'),
    dict(type='ColorJitter', strength=0.3),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=32),
    dict(type='PackInputs'),
]


@pytest.fixture(scope='module')
def imagenet(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def test_classes_are_the_sorted_folders_and_samples_pack(imagenet):
    ds = ImageNet(imagenet, 'train', pipeline=TRAIN_PIPELINE)
    folders = sorted(os.listdir(os.path.join(imagenet, 'train')))
    assert ds.metainfo['classes'] == tuple(folders) and len(ds) == 4 * len(folders)  # tiny: 4 per class
    assert {ds.get_data_info(i)['gt_label'] for i in range(len(ds))} == set(range(len(folders)))
    sample = ds[0]
    assert sample['inputs'].dtype == torch.uint8 and sample['inputs'].shape == (3, 32, 32)
    assert int(sample['data_samples']['gt_label']) == ds.get_data_info(0)['gt_label']


@pytest.mark.parametrize('transform', [
    dict(type='SimpleRandomCrop', size=32), dict(type='ResizeCenterCrop', size=32, crop_pct=0.875)])
def test_crops_give_the_training_size(imagenet, transform):
    ds = ImageNet(imagenet, 'val', pipeline=[dict(type='LoadImage'), transform, dict(type='PackInputs')],
                  test_mode=True)
    assert ds[3]['inputs'].shape == (3, 32, 32)


def test_randaugment_survives_zero_bit_posterize():
    from pretrain.transforms import RandAugment
    augment = RandAugment('rand-m10-n3-mstd0-inc1', img_size=32)  # always magnitude 10: posterize to 0 bits
    posterize = [op for op in augment.transform.ops if op.name == 'PosterizeIncreasing'][0]
    posterize.prob = 1.0
    out = posterize(Image.new('RGB', (8, 8), (200, 100, 50)))
    assert out.getpixel((0, 0)) == (0, 0, 0)


def test_wrong_layout_shows_the_expected_tree(tmp_path):
    (tmp_path / 'train').mkdir()
    Image.new('RGB', (8, 8)).save(tmp_path / 'train' / 'flat.JPEG')  # images without class folders
    with pytest.raises(DatasetLayoutError, match=r"no class sub-folders[\s\S]*train/<class>/<image>.JPEG"):
        ImageNet(str(tmp_path), 'train')
    with pytest.raises(DatasetLayoutError, match="split 'val'.*folder not found"):
        ImageNet(str(tmp_path), 'val')


def test_corrupt_image_error_names_the_file(imagenet, tmp_path):
    root = tmp_path / 'imagenet'
    shutil.copytree(imagenet, root)
    bad = sorted((root / 'train').rglob('*.JPEG'))[0]
    bad.write_bytes(bad.read_bytes()[:200])  # truncated JPEG
    ds = ImageNet(str(root), 'train', pipeline=TRAIN_PIPELINE)
    index = [ds.get_data_info(i)['img_path'] for i in range(len(ds))].index(str(bad))
    with pytest.raises(SampleError, match=f'ImageNet sample {index} \\({bad}\\)') as error:
        ds[index]  # the dataset names the sample; the reader's own error is behind it
    assert isinstance(error.value.__cause__, ImageReadError) and str(bad) in str(error.value.__cause__)
    skipping = LoadImage(skip_corrupt=True)
    assert skipping(dict(img_path=str(bad))) is None and skipping.num_skipped == 1


def test_repeat_aug_sampler_repeats_each_image(imagenet):
    ds = ImageNet(imagenet, 'train')
    sampler = RepeatAugSampler(ds, num_repeats=3, seed=0)
    sampler.set_epoch(1)
    indices = list(sampler)
    assert len(indices) == len(sampler) == len(ds)  # one epoch stays one dataset length
    counts = torch.bincount(torch.tensor(indices))
    assert set(counts[counts > 0].tolist()) <= {3} | {len(ds) % 3}  # whole triplets (the last may be cut)
    assert indices[:3] == [indices[0]] * 3
    sampler.set_epoch(2)
    assert list(sampler) != indices


def test_repeat_aug_sampler_spreads_the_copies_over_ranks(imagenet, monkeypatch):
    import pretrain.samplers
    ds = ImageNet(imagenet, 'train')
    per_rank = []
    for rank in (0, 1):
        monkeypatch.setattr(pretrain.samplers, 'get_dist_info', lambda: (rank, 2))
        per_rank.append(list(RepeatAugSampler(ds, num_repeats=3, seed=0)))
    assert len(per_rank[0]) == len(per_rank[1]) == len(ds) // 2
    first = per_rank[0][0]
    assert first in per_rank[1]  # the copies of one image go to both processes
    counts = torch.bincount(torch.tensor(per_rank[0] + per_rank[1]))
    assert counts[first] == 3


def test_mixup_cutmix_give_soft_targets_and_normalised_inputs():
    pre = ClsDataPreprocessor(num_classes=10, mixup_alpha=0.8, cutmix_alpha=1.0, erase_prob=0.25)
    data = dict(inputs=torch.randint(0, 256, (4, 3, 16, 16), dtype=torch.uint8),
                data_samples=dict(gt_label=torch.tensor([0, 1, 2, 3])))
    out = pre(dict(data), training=True)
    assert out['inputs'].dtype == torch.float32 and out['data_samples']['gt_score'].shape == (4, 10)
    torch.testing.assert_close(out['data_samples']['gt_score'].sum(1), torch.ones(4))
    evaluation = pre(dict(inputs=data['inputs'], data_samples=dict(gt_label=data['data_samples']['gt_label'])))
    assert 'gt_score' not in evaluation['data_samples']
    mean = torch.tensor([123.675, 116.28, 103.53])[:, None, None]
    std = torch.tensor([58.395, 57.12, 57.375])[:, None, None]
    torch.testing.assert_close(evaluation['inputs'], (data['inputs'].float() - mean) / std)
    with pytest.raises(ValueError, match='even batch size'):
        pre(dict(inputs=data['inputs'][:3], data_samples=dict(gt_label=torch.tensor([0, 1, 2]))), training=True)


def test_bce_binarizes_mixed_targets_as_deit3():
    logits = torch.randn(2, 4)
    mixed = dict(gt_label=torch.tensor([0, 1]), gt_score=torch.tensor([[.7, .3, 0, 0], [0, .6, 0, .4]]))
    multi_hot = torch.tensor([[1., 1, 0, 0], [0, 1, 0, 1]])
    torch.testing.assert_close(ClsLoss('bce')(logits, mixed),
                               torch.nn.functional.binary_cross_entropy_with_logits(logits, multi_hot))
    plain = dict(gt_label=torch.tensor([0, 1]))
    torch.testing.assert_close(ClsLoss('ce', label_smoothing=0.1)(logits, plain),
                               torch.nn.functional.cross_entropy(logits, plain['gt_label'], label_smoothing=0.1))


def test_distillation_losses():
    student, teacher = torch.randn(4, 10), torch.randn(4, 10)
    torch.testing.assert_close(distillation_loss(student, teacher, 'hard', 1.0),
                               torch.nn.functional.cross_entropy(student, teacher.argmax(1)))
    assert distillation_loss(teacher, teacher, 'soft', 3.0).abs() < 1e-6
    assert distillation_loss(student, teacher, 'soft', 3.0) > 0


def test_accuracy_topk_in_percent():
    metric = Accuracy(topk=(1, 2))
    scores = torch.tensor([[.1, .7, .2], [.5, .1, .4], [.2, .3, .5], [.6, .3, .1]])
    metric.process({}, [dict(pred_score=s, gt_label=torch.tensor(y)) for s, y in zip(scores, [1, 2, 0, 1])])
    assert metric.compute_metrics(metric.results) == {'top1': 25.0, 'top2': 75.0}
