"""ImageNet-A / -R / -Sketch / -C readers and the robustness and calibration metrics (pretrain/robustness.py,
pretrain/robustness_metrics.py): the readers label by ImageNet-1k index and refuse other layouts in one line naming
the folder; top1_a / top1_r take the argmax over the 200 classes; mCE and ECE agree with hand-computed cases; the
demo copies are in layouts the readers accept, --check catches a broken one, the base configs' extra sets build on
them, and tools/test.py evaluates a checkpoint on the demo ImageNet-C."""
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope, init_default_scope
from PIL import Image

from pretrain.data import DatasetLayoutError
from pretrain.robustness import (CORRUPTIONS, ImageNetA, ImageNetC, ImageNetR, ImageNetSketch, class_subset,
                                 class_subset_indices, imagenet_1k_wnids)
from pretrain.robustness_metrics import (ALEXNET_ERROR, AccuracyWithCalibration, CalibrationError,
                                         ClassSubsetAccuracy, CorruptionError, expected_calibration_error)
from harness import demo_data
from harness.demo_data import corruptions, imagenet, imagenet_robustness
from pretrain.transforms import SKIPPED_LABEL, LoadImage, PackInputs
from vitbench.results import per_image
from test_seg_train import tools_test  # noqa: F401  (tools/test.py loaded as a module)

REPO = Path(__file__).resolve().parents[1]
DEMO_SETS = ['imagenet_a', 'imagenet_r', 'imagenet_sketch', 'imagenet_c']
TENCH, GOLDFISH, STINGRAY, GOLDFINCH, TOILET_TISSUE = 'n01440764', 'n01443537', 'n01498041', 'n01531178', 'n15075141'


def image(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new('RGB', (8, 8)).save(path)


def infos(dataset):
    return [dataset.get_data_info(i) for i in range(len(dataset))]


def labels(dataset):
    return {Path(d['img_path']).parent.name: d['gt_label'] for d in infos(dataset)}


def first_line(error) -> str:
    return str(error.value).splitlines()[0]


# ------------------------------------------------------------------------------------------------ class lists
def test_class_lists_are_the_papers():
    """ImageNet-A's first classes (natural-adv-examples' indices_in_1k: 6, 11, 13, ...) and ImageNet-R's (imagenet-r's
    imagenet_r_wnids: goldfish, great white shark, ...); the 1k list in ImageFolder order, tench first."""
    wnids = imagenet_1k_wnids()
    assert len(wnids) == 1000 and wnids[0] == TENCH and wnids[-1] == TOILET_TISSUE and list(wnids) == sorted(wnids)
    assert len(set(class_subset('imagenet_a'))) == len(set(class_subset('imagenet_r'))) == 200
    assert class_subset_indices('imagenet_a')[:5] == (6, 11, 13, 15, 17)
    assert class_subset('imagenet_r')[:3] == (GOLDFISH, 'n01484850', 'n01494475')
    assert class_subset_indices('imagenet_r')[:3] == (1, 2, 4)


# ------------------------------------------------------------------------------------------------ readers
def test_a_r_sketch_label_by_imagenet_1k_index(tmp_path):
    for folder in (STINGRAY, GOLDFINCH):
        image(tmp_path / 'a' / folder / 'x.jpg')
    image(tmp_path / 'r' / GOLDFISH / 'cartoon_0.jpg')
    for folder in (TENCH, TOILET_TISSUE):
        image(tmp_path / 'sketch' / folder / 'sketch_0.JPEG')
    assert labels(ImageNetA(data_root=str(tmp_path / 'a'))) == {STINGRAY: 6, GOLDFINCH: 11}
    assert labels(ImageNetR(data_root=str(tmp_path / 'r'))) == {GOLDFISH: 1}
    assert labels(ImageNetSketch(data_root=str(tmp_path / 'sketch'))) == {TENCH: 0, TOILET_TISSUE: 999}


def test_a_refuses_a_class_outside_its_200_in_one_line(tmp_path):
    image(tmp_path / TENCH / 'x.jpg')  # tench is one of the 1000 but not of ImageNet-A's 200
    with pytest.raises(DatasetLayoutError) as error:
        ImageNetA(data_root=str(tmp_path))
    assert first_line(error) == (f"ImageNet-A at {tmp_path}: folders ['{TENCH}'] are not wnids of the 200 classes of "
                                 'ImageNet-A. Expected the release layout:')
    assert '<wnid>/<image>.jpg' in str(error.value)


def test_sketch_one_level_too_high_names_the_folder(tmp_path):
    image(tmp_path / 'sketch' / TENCH / 'sketch_0.JPEG')
    with pytest.raises(DatasetLayoutError, match=r"folders \['sketch'\] are not wnids of the 1000 classes"):
        ImageNetSketch(data_root=str(tmp_path))
    with pytest.raises(DatasetLayoutError, match='ImageNet-R at .*missing: folder not found'):
        ImageNetR(data_root=str(tmp_path / 'missing'))


def c_root(tmp_path, corruptions_present=('gaussian_noise', 'contrast'), severities=range(1, 6)):
    for corruption in corruptions_present:
        for severity in severities:
            for wnid in (TENCH, GOLDFISH):
                image(tmp_path / corruption / str(severity) / wnid / 'ILSVRC2012_val_00000001.JPEG')
    return str(tmp_path)


def test_c_tags_each_image_with_its_corruption_and_severity(tmp_path):
    dataset = ImageNetC(data_root=c_root(tmp_path))
    seen = {(CORRUPTIONS[d['corruption']], d['severity'], d['gt_label']) for d in infos(dataset)}
    assert seen == {(c, s, y) for c in ('gaussian_noise', 'contrast') for s in range(1, 6) for y in (0, 1)}
    one = ImageNetC(data_root=str(tmp_path), corruptions='contrast', severities=3, pipeline=[LoadImage(), PackInputs()])
    assert len(one) == 2 and {Path(d['img_path']).parts[-4:-2] for d in infos(one)} == {('contrast', '3')}
    sample = one.prepare_data(0)['data_samples']  # what CorruptionError reads from the batch
    assert (CORRUPTIONS[sample['corruption']], sample['severity']) == ('contrast', 3)


@pytest.mark.parametrize('damage, expected', [
    (lambda root: shutil.rmtree(root / 'contrast' / '4'), r'contrast/4/ not found \(each corruption needs the '
                                                            r'severity folders \[1, 2, 3, 4, 5\]\)'),
    (lambda root: (root / 'digital').mkdir() or shutil.move(str(root / 'contrast'), str(root / 'digital')),
     r"group folders \['digital'\] hold the corruption folders"),
    (lambda root: (root / 'blurry').mkdir(), r"folders \['blurry'\] are not ImageNet-C corruptions"),
    (lambda root: shutil.move(str(root / 'contrast' / '2' / TENCH), str(root / 'contrast' / '2' / 'tench')),
     r"folders \['tench'\] are not wnids of the 1000 classes of ImageNet-1k \(contrast/2/\)"),
])
def test_c_layout_errors_are_one_line_naming_the_folder(tmp_path, damage, expected):
    root = Path(c_root(tmp_path))
    damage(root)
    with pytest.raises(DatasetLayoutError) as error:
        ImageNetC(data_root=str(root))
    assert first_line(error).startswith(f'ImageNet-C at {root}: ')
    assert re.search(expected, first_line(error)), first_line(error)


def test_c_refuses_an_unknown_corruption_name(tmp_path):
    with pytest.raises(ValueError, match=r"\['fog_machine'\] are not ImageNet-C corruptions; expected some of"):
        ImageNetC(data_root=c_root(tmp_path), corruptions=['contrast', 'fog_machine'])


# ------------------------------------------------------------------------------------------------ metrics
def batch(labels, paths=None, **tags):
    samples = dict(gt_label=torch.tensor(labels), **{k: torch.tensor(v) for k, v in tags.items()})
    if paths is not None:
        samples['img_path'] = paths
    return dict(data_samples=samples)


def predictions(scores, labels):
    return [dict(pred_score=torch.as_tensor(s, dtype=torch.float32), gt_label=torch.tensor(y))
            for s, y in zip(scores, labels)]


def test_a_argmax_is_over_its_200_classes_only():
    """Image 1 (a stingray, index 6): tench (0, not an A class) scores highest, 0.5; of the A classes stingray
    scores most, 0.3 -> right, though the plain argmax is wrong. Image 2 (a goldfinch, 11): stingray 0.3 > goldfinch
    0.2 -> wrong. By hand: 1 of 2, 50 %."""
    scores = torch.zeros(2, 1000)
    scores[:, 0], scores[:, 6], scores[:, 11] = 0.5, 0.3, 0.2
    metric = ClassSubsetAccuracy(classes='imagenet_a')
    metric.process(batch([6, 11], [f'a/{STINGRAY}/x.jpg', f'a/{GOLDFINCH}/y.jpg']), predictions(scores, [6, 11]))
    per_image.take_published()
    assert metric.compute_metrics(metric.results) == pytest.approx(dict(top1_a=50.0))
    evidence = per_image.take_published()['top1_a']
    assert list(evidence['ids']) == [f'{STINGRAY}/x.jpg', f'{GOLDFINCH}/y.jpg']
    assert list(evidence['correct']) == [True, False] and str(evidence['kind']) == 'accuracy'


def test_r_with_fewer_outputs_keeps_its_classes_among_them_and_leaves_out_stand_ins():
    """A 25-output model (the demo's): ImageNet-R's classes among outputs 0..24 are goldfish (1), great white shark
    (2), hammerhead (4), stingray (6), hen (8), ostrich (9), goldfinch (11), junco (13), bald eagle (22), vulture (23);
    not tench (0). Image 1 (goldfish, 1): 0 highest, then 1 -> right; image 2 unreadable (a stand-in)."""
    assert ClassSubsetAccuracy(classes='imagenet_r').kept(25).tolist() == [1, 2, 4, 6, 8, 9, 11, 13, 22, 23]
    scores = torch.zeros(2, 25)
    scores[:, 0], scores[:, 1] = 0.9, 0.1
    metric = ClassSubsetAccuracy(classes='imagenet_r')
    metric.process(batch([1, SKIPPED_LABEL]), predictions(scores, [1, SKIPPED_LABEL]))
    assert metric.compute_metrics(metric.results) == pytest.approx(dict(top1_r=100.0, skipped_images=1))


def test_alexnet_errors_are_the_published_ones():
    """Hendrycks & Dietterich's AlexNet errors (hendrycks/robustness, as AugMix's ALEXNET_ERR lists them)."""
    published = [0.886428, 0.894468, 0.922640, 0.819880, 0.826268, 0.785948, 0.798360, 0.866816, 0.826572,
                 0.819324, 0.564592, 0.853204, 0.646056, 0.717840, 0.606500]
    assert list(CORRUPTIONS) == ['gaussian_noise', 'shot_noise', 'impulse_noise', 'defocus_blur', 'glass_blur',
                                 'motion_blur', 'zoom_blur', 'snow', 'frost', 'fog', 'brightness', 'contrast',
                                 'elastic_transform', 'pixelate', 'jpeg_compression']
    assert [ALEXNET_ERROR[c] for c in CORRUPTIONS] == published


def corruption_metric(corruptions_evaluated):
    """Two images per (corruption, severity); at severities 1 and 2 one of them is wrong: errors 50, 50, 0, 0, 0."""
    metric = CorruptionError()
    for corruption in corruptions_evaluated:
        index = CORRUPTIONS.index(corruption)
        for severity in range(1, 6):
            wrong = severity <= 2
            scores = torch.eye(3)[[0, 1 if wrong else 0]]
            metric.process(batch([0, 0], corruption=[index] * 2, severity=[severity] * 2), predictions(scores, [0, 0]))
    return metric


def test_mce_against_a_hand_computed_case():
    """Per corruption: the errors sum to 100 % over the five severities, AlexNet's to 5 x its mean, so
    CE = 100 / (500 x AlexNet's error) = 20 / AlexNet's error (in %), e.g. 20 / 0.886428 = 22.5625 for Gaussian
    noise; mCE = the mean over the 15."""
    metric = corruption_metric(CORRUPTIONS)
    metrics = metric.compute_metrics(metric.results)
    assert metrics['error_gaussian_noise'] == pytest.approx(20.0)
    assert metrics['CE_gaussian_noise'] == pytest.approx(22.5625, abs=1e-4)
    assert metrics['CE_brightness'] == pytest.approx(20 / 0.564592)
    assert metrics['mCE'] == pytest.approx(sum(20 / e for e in ALEXNET_ERROR.values()) / 15)
    assert 'mCE_partial' not in metrics


def test_mce_over_fewer_corruptions_is_named_partial():
    metric = corruption_metric(['gaussian_noise', 'contrast'])
    metrics = metric.compute_metrics(metric.results)
    assert metrics['mCE_partial'] == pytest.approx((20 / 0.886428 + 20 / 0.853204) / 2) and 'mCE' not in metrics


def calibration_scores(confidences, top1):
    """10-class probability vectors whose maximum, at class ``top1``, is the given confidence."""
    rows = []
    for confidence, cls in zip(confidences, top1):
        row = torch.full((10,), (1 - confidence) / 9)
        row[cls] = confidence
        rows.append(row)
    return torch.stack(rows)


def test_ece_against_a_hand_computed_case():
    """Confidences 0.95, 0.95, 0.55, 0.25; right, wrong, right, wrong. 15 bins: 0.95 in (14/15, 1] (accuracy 0.5,
    gap 0.45, two images), 0.55 in (8/15, 9/15] (gap 0.45), 0.25 in (3/15, 4/15] (gap 0.25). ECE = (2 x 0.45 + 0.45 +
    0.25) / 4 = 0.4: 40 %. The stand-in (label SKIPPED_LABEL) is left out."""
    scores = calibration_scores([0.95, 0.95, 0.55, 0.25, 0.9], [0, 0, 1, 2, 0])
    truth = [0, 1, 1, 0, SKIPPED_LABEL]
    metric = CalibrationError()
    metric.process(batch(truth), predictions(scores, truth))
    assert metric.compute_metrics(metric.results) == pytest.approx(dict(ece=40.0, skipped_images=1))


def reference_ece(confidences, correct, bins=15):
    """Guo et al.'s reference loop (gpleiss/temperature_scaling's _ECELoss): per bin (lower, upper], the share of
    images times |accuracy - mean confidence|."""
    edges = torch.linspace(0, 1, bins + 1)
    ece = torch.zeros(1)
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_bin = (confidences > lower) & (confidences <= upper)
        if in_bin.any():
            ece += in_bin.float().mean() * (correct[in_bin].float().mean() - confidences[in_bin].mean()).abs()
    return 100 * float(ece)


def test_ece_agrees_with_the_reference_loop_on_random_predictions():
    generator = torch.Generator().manual_seed(0)
    probabilities = torch.randn(500, 10, generator=generator).mul(2).softmax(-1)
    truth = torch.randint(0, 10, (500,), generator=generator)
    confidences, top1 = probabilities.max(-1)
    assert expected_calibration_error(confidences, top1 == truth) == pytest.approx(
        reference_ece(confidences, top1 == truth), abs=1e-4)


def test_val_metric_gives_topk_and_ece_and_takes_a_suffix():
    scores = calibration_scores([0.95, 0.95, 0.55, 0.25], [0, 0, 1, 2])
    truth = [0, 1, 1, 0]
    metric = AccuracyWithCalibration(topk=(1, 10), suffix='_v2')  # the case above; top-10 of 10 classes: all right
    metric.process(batch(truth, [f'v/{i}.jpg' for i in range(4)]), predictions(scores, truth))
    per_image.take_published()
    assert metric.compute_metrics(metric.results) == pytest.approx(dict(top1_v2=50.0, top10_v2=100.0, ece_v2=40.0))
    assert list(per_image.take_published()['top1_v2']['correct']) == [True, False, True, False]


# ------------------------------------------------------------------------------------------------ demo data
@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(DEMO_SETS), str(root), scale='tiny', log=lambda m: None) == []
    return root


def test_demo_sets_are_in_the_layouts_the_readers_take(demo):
    a = ImageNetA(data_root=str(demo / 'imagenet_a' / 'imagenet-a'))
    r = ImageNetR(data_root=str(demo / 'imagenet_r' / 'imagenet-r'))
    sketch = ImageNetSketch(data_root=str(demo / 'imagenet_sketch' / 'sketch'))
    c = ImageNetC(data_root=str(demo / 'imagenet_c'))
    demo_labels = set(range(len(imagenet.WNIDS)))  # the demo's 25 wnids are the first 25 of the 1000
    assert set(labels(a)) <= set(class_subset('imagenet_a')) and len(labels(a)) == 7
    assert set(labels(r)) <= set(class_subset('imagenet_r')) and len(labels(r)) == 10
    assert set(labels(sketch).values()) == demo_labels
    assert {(CORRUPTIONS[d['corruption']], d['severity']) for d in infos(c)} == {
        (name, s) for name in corruptions.PARAMETERS for s in range(1, 6)}
    assert {d['gt_label'] for d in infos(c)} == demo_labels
    assert demo_data.check(demo_data.select(DEMO_SETS), str(demo)) == {name: [] for name in DEMO_SETS}


def test_demo_corruptions_grow_with_severity():
    """Each corruption moves the picture further from the original as the severity rises (severity 1 < 5)."""
    img = imagenet_robustness.centre_square(imagenet_robustness.val_picture(0, 3, 0, 48)).astype(float)
    for name, corrupt in corruptions.CORRUPT.items():
        change = [abs(corrupt(img.astype(np.uint8), s, np.random.default_rng(0)) - img).mean() for s in (1, 5)]
        assert change[0] < change[1], name


def check(root):
    return subprocess.run([sys.executable, 'tools/make_demo_data.py', '--check', str(root), '--workers', '1',
                           '--datasets', *DEMO_SETS], cwd=REPO, capture_output=True, text=True)


def test_check_command_passes_the_demo_and_names_a_broken_copy(demo, tmp_path):
    result = check(demo)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / 'demo'
    shutil.copytree(demo, broken)
    shutil.rmtree(broken / 'imagenet_c' / 'contrast' / '5')
    a = broken / 'imagenet_a' / 'imagenet-a'
    os.rename(a / STINGRAY, a / TENCH)  # a class that is not ImageNet-A's
    result = check(broken)
    assert result.returncode == 1
    assert 'FAIL  imagenet_c' in result.stdout and 'contrast/5/ not found' in result.stdout
    assert 'FAIL  imagenet_a' in result.stdout and f"folders ['{TENCH}'] are not wnids" in result.stdout


def test_base_configs_extra_sets_build_on_the_demo_copies(demo, vitbench_scope):
    """The four robustness sets of every DeiT / DeiT III config (after V2 and ReaL, whose places tests rely on),
    built on the demo data with their evaluators."""
    from vitbench.registry import DATASETS, METRICS
    cfg = Config.fromfile(str(REPO / 'configs' / '_base_' / 'datasets' / 'imagenet_deit3.py'))
    assert cfg.val_evaluator == dict(type='AccuracyWithCalibration', topk=(1, 5))
    extra = cfg.val_cfg.extra_sets
    assert [e.dataset.type for e in extra] == ['ImageNetV2', 'ImageNetReaL', 'ImageNetA', 'ImageNetR',
                                               'ImageNetSketch', 'ImageNetC']
    roots = {'ImageNetA': 'imagenet_a/imagenet-a', 'ImageNetR': 'imagenet_r/imagenet-r',
             'ImageNetSketch': 'imagenet_sketch/sketch', 'ImageNetC': 'imagenet_c'}
    for entry in extra[2:]:
        assert entry.dataset.data_root.startswith('data/imagenet-')
        dataset = DATASETS.build(dict(entry.dataset, data_root=str(demo / roots[entry.dataset.type])))
        assert len(dataset) > 0
        METRICS.build(entry.evaluator)


# ------------------------------------------------------------------------------------------------ tools/test.py


def noisy_checkpoint(config: Path, path: Path) -> Path:
    """The config's model with random weights and noise on each weight matrix, so that predictions vary."""
    from mmengine.registry import MODELS
    cfg = Config.fromfile(config)
    init_default_scope(cfg.default_scope)
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = MODELS.build(cfg.model)
    generator = torch.Generator().manual_seed(0)
    state = {k: v + 0.2 * torch.randn(v.shape, generator=generator) if k.endswith('weight') and v.dim() > 1 else v
             for k, v in model.state_dict().items()}
    torch.save({'state_dict': state, 'meta': {}}, path)
    return path


def test_tools_test_reports_the_corruption_errors_of_the_demo_imagenet_c(tools_test, demo, tmp_path,  # noqa: F811
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)  # away from the repository's data/
    root = demo / 'imagenet_c'
    config = tmp_path / 'imagenet_c_test.py'
    config.write_text(f"_base_ = ['{REPO}/configs/demo/deit3_sup_demo.py']\n"
                      "test_dataloader = dict(batch_size=100, num_workers=0, persistent_workers=False, dataset=dict(\n"
                      f"    _delete_=True, type='ImageNetC', data_root='{root}',\n"
                      "    pipeline={{_base_.test_pipeline}}))\n"
                      "test_evaluator = dict(_delete_=True, type='CorruptionError')\n")
    checkpoint = noisy_checkpoint(config, tmp_path / 'weights.pth')
    out = tmp_path / 'pred.pkl'
    tools_test.main([str(config), str(checkpoint), '--work-dir', str(tmp_path / 'work'), '--out', str(out)])
    metrics = json.loads((tmp_path / 'work' / 'eval' / 'weights' / 'result.json').read_text())['metrics']
    demo_corruptions = list(corruptions.PARAMETERS)
    assert {f'CE_{c}' for c in demo_corruptions} | {f'error_{c}' for c in demo_corruptions} | {'mCE_partial'} <= \
        metrics.keys() and 'mCE' not in metrics
    # the errors recomputed from the saved predictions, in the dataset's order
    with open(out, 'rb') as f:
        saved = pickle.load(f)
    data_list = infos(ImageNetC(data_root=str(root)))
    assert len(saved) == len(data_list)
    wrong = {}
    for prediction, info in zip(saved, data_list):
        key = (CORRUPTIONS[info['corruption']], info['severity'])
        wrong.setdefault(key, []).append(int(prediction['pred_score'].argmax()) != info['gt_label'])
    for name in demo_corruptions:
        error = sum(100 * sum(w) / len(w) for (c, _), w in wrong.items() if c == name) / 5
        assert metrics[f'error_{name}'] == pytest.approx(error)
        assert metrics[f'CE_{name}'] == pytest.approx(error / ALEXNET_ERROR[name])
