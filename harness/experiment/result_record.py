"""``work_dir/result.json``: the one record every evaluating run leaves behind (schema in docs/architecture.md).

A config says what it measures in an ``experiment`` dict::

    experiment = dict(task='seg', dataset='ade20k', backbone='deit3_base_patch16_224',
                      backbone_overrides=dict(drop_path_rate=0.1),  # optional
                      pretrain=dict(recipe='supervised', epochs=800, checkpoint=None),  # optional
                      eval='ss',                                                       # optional
                      protocol=dict(name=..., settings=[...]))  # from configs/_base_/protocols/<name>.py

tools/train.py and tools/test.py add ``ResultRecorderHook`` (harness/experiment/result_hook.py) to every config
that has one. The hook writes the record after training (the last validation's metrics, plus the final training
loss) and after testing. ``pretrain`` defaults to the metadata of the backbone checkpoint the run started from.
Metrics are stored as percentages, as the papers report them.

``protocol`` is the protocol's name and the digest of its settings as run (:mod:`harness.experiment.protocol`;
null for a config without one). ``seed`` is the random seed mmengine used (``randomness.seed``, or the one it
drew). ``cost`` is what the run took (``vitbench.engine.run_cost``: wall seconds from the start of the run to the
end of training or testing, all processes of a resumed run included; the device; device-hours; peak memory;
training images per second) plus the device-hours of the training behind its starting weights
(``meta['device_hours']`` of that backbone.pth) and the sum of both.
"""
import datetime
import json
import numbers
import os.path as osp
import subprocess
import uuid
from typing import Dict, Optional

from backbones import create_model
from backbones.checkpoint import read_checkpoint
from backbones.complexity import count_flops, count_params
from backbones.timm_backbones import default_resolution
from backbones.variants import VARIANTS
from harness.experiment.eval_set import evaluated_set, schedule_of
from harness.experiment.lr_curve import recorded_curve
from harness.experiment.protocol import protocol_of
from harness.experiment.run_identity import CHECKPOINT_KEY as RUN_KEY
from harness.experiment.run_identity import run_id_of
from pretrain.export import origin_of
from vitbench.engine.checkpoint_integrity import sha256_of
from vitbench.engine.run_cost import meter_of
from vitbench.fileio import atomic_write_text
from vitbench.results import per_image
from vitbench.results.schema import DIVERGED, EVALUATION, TRAINING, fraction_prefixes, task_names, task_of

_REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def normalize_metrics(metrics: Dict[str, float]) -> Dict[str, float]:
    """'coco/bbox_mAP': 0.407 → 'bbox_mAP': 40.7; 'accuracy/top1' → 'top1'; 'mIoU' stays; COCO's -1 (an area
    range without objects) is left out. The metrics reported as fractions are those under a task record's
    ``fraction_prefixes`` (mmdet's COCO AP: downstream/det/record.py); everything else is in percent."""
    prefixes = fraction_prefixes()
    normalized = {}
    for name, value in metrics.items():
        if not isinstance(value, numbers.Real):  # numpy scalars included (mmseg returns np.float32)
            continue  # e.g. per-class tables some metrics return alongside the scalars
        fraction = name.startswith(prefixes)
        if fraction and value < 0:
            continue  # COCO's -1: no ground truth in that range (e.g. no large objects), not a score
        normalized[name.split('/')[-1]] = float(value) * (100.0 if fraction else 1.0)
    return normalized


def experiment_of(cfg) -> dict:
    experiment = dict(cfg.get('experiment') or {})
    missing = [k for k in ('task', 'dataset', 'backbone') if not experiment.get(k)]
    if missing:
        raise KeyError(f"config {cfg.filename}: `experiment` needs the keys {missing} "
                       f"(task one of {task_names()}, dataset name, backbone variant name)")
    if task_of(experiment['task']) is None:
        raise ValueError(f"config {cfg.filename}: experiment.task={experiment['task']!r}, "
                         f'expected one of {task_names()} (a task of your own: its package in the config\'s '
                         'custom_imports, or --imports PACKAGE)')
    return experiment


def git_commit() -> Optional[str]:
    try:
        out = subprocess.run(['git', '-C', _REPO, 'rev-parse', 'HEAD'], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def backbone_complexity(name: str, overrides: dict) -> dict:
    """Parameters (M) and GFLOPs of the named backbone at its own resolution, as the leaderboard shows."""
    model = create_model(name, num_classes=0, **overrides)
    try:
        gflops = count_flops(model, default_resolution(model)) / 1e9  # the variant's own resolution
    except Exception:  # noqa: BLE001 - an untraceable model still gets its record, without GFLOPs
        gflops = None
    return dict(params_M=count_params(model) / 1e6, gflops=gflops)


def _size(value):
    """384, (384, 384) or [384, 384] → 384; (384, 320) → [384, 320] (height, width)."""
    if isinstance(value, (list, tuple)):
        height, width = (int(v) for v in value)
        return height if height == width else [height, width]
    return int(value)


def resolutions(name: str, overrides: dict) -> dict:
    """``img_size``: the input resolution the run built its backbone at (``backbone_overrides.img_size``, else the
    variant's); ``variant_img_size``: the named variant's own. The leaderboard tells a fine-tune at another resolution
    than the variant's own (the papers' ↑384) apart by them."""
    own = (VARIANTS.get(name) or {}).get('kwargs', {}).get('img_size', 224)
    return dict(img_size=_size(overrides.get('img_size', own)), variant_img_size=_size(own))


def eval_of(cfg, experiment: dict) -> str:
    """``experiment.eval``, else for an ImageNet fine-tune that trains only part of the model its mode
    (``model.trainable``: 'attention', 'ffn' or 'linear'), so that "Three things" Tables 5/6's attention-only and
    FFN-only fine-tunes, and a linear probe, fill their own leaderboard columns beside full fine-tuning's
    rather than conflict with it (transfer runs get theirs from TransferCheckHook); else 'ss'."""
    if experiment.get('eval'):
        return experiment['eval']
    trainable = (cfg.get('model') or {}).get('trainable', 'all')
    return trainable if task_of(experiment['task']).finetunes and trainable != 'all' else 'ss'


def build_record(cfg, metrics: Dict[str, float], seed: Optional[int] = None,
                 run_cost: Optional[dict] = None) -> dict:
    """The record of a run; ``run_cost`` is its own cost (``RunMeter.cost``), to which the record adds the
    pre-training behind its weights (``cost`` is null without it)."""
    experiment = experiment_of(cfg)
    overrides = dict(experiment.get('backbone_overrides') or {})
    pretrain, pretrain_hours = origin_of(experiment, cfg)
    cost = None if run_cost is None else dict(
        run_cost, pretrain_device_hours=pretrain_hours,
        total_device_hours=run_cost['device_hours'] + (pretrain_hours or 0.0))
    return dict(
        task=experiment['task'],
        dataset=experiment['dataset'],
        backbone=experiment['backbone'],
        backbone_overrides=overrides,
        pretrain=pretrain,
        metrics=normalize_metrics(metrics),
        eval=eval_of(cfg, experiment),
        protocol=protocol_of(cfg),
        options=dict(experiment.get('options') or {}),  # the --cfg-options that changed the experiment
        **resolutions(experiment['backbone'], overrides),
        **backbone_complexity(experiment['backbone'], overrides),
        seed=seed,
        cost=cost,
        config=cfg.filename,
        git_commit=git_commit(),
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
    )


def record_divergence(runner, where: dict) -> str:
    """Write the ``result.json`` of a training stopped because its loss stopped being finite
    (:class:`harness.experiment.divergence.DivergenceHook`): the run's record with no metrics,
    ``"status": "diverged"`` and ``diverged`` = ``where`` (iteration, loss, the last finite one). The leaderboard
    shows such a run as diverged, never as a number. Returns its path ('' when nothing is recorded)."""
    if not runner.cfg.get('experiment'):
        return ''  # a config that records nothing (no experiment dict)
    return record_run(runner, {}, training=True, status=DIVERGED, diverged=where)


def record_run(runner, metrics: Dict[str, float], training: bool, **extra) -> str:
    """Stop the run's cost meter and write its ``result.json`` (rank 0; ``extra`` keys added to the record);
    returns its path ('' on other ranks)."""
    meter = meter_of(runner)
    meter.stop()
    if runner.rank != 0:
        return ''
    seed = None if runner.seed is None else int(runner.seed)
    record = dict(build_record(runner.cfg, metrics, seed, meter.cost(runner, training)), **extra)
    # what makes it one experiment with others besides its config (vitbench.results.experiment)
    record['schedule'] = schedule_of(runner) if training else None
    record['lr'] = recorded_curve(runner) if training else None  # the learning-rate curve as computed at start
    record['eval_set'] = None if extra.get('status') else evaluated_set(runner, training)
    record['run'] = dict(kind=TRAINING, id=run_id_of(runner)) if training else evaluation_of(runner)
    # the metrics whose per-image evidence the last evaluation left beside the record (vitbench.results.per_image)
    record['per_image'] = [m for m in per_image.metrics_in(runner.work_dir) if m in record['metrics']]
    return write_result(runner.work_dir, record)


def evaluation_of(runner) -> dict:
    """``run`` of an evaluation's record: a run id of its own and the checkpoint it scored (path, sha256, and from
    the checkpoint's meta the training run it came from, whether it is that training's final checkpoint, its epoch
    and iteration; null where the checkpoint does not say)."""
    path = runner.cfg.get('load_from')
    checkpoint = dict(path=None, sha256=None, training_run=None, final=None, epoch=None, iter=None)
    if isinstance(path, str) and osp.isfile(path):
        checkpoint.update(path=osp.abspath(path), sha256=sha256_of(path))
        content = read_checkpoint(path, mmap=True)
        meta = (content.get('meta') if isinstance(content, dict) else None) or {}
        run = meta.get(RUN_KEY) if isinstance(meta.get(RUN_KEY), dict) else {}
        checkpoint.update(training_run=run.get('id'), final=run.get('final'),
                          **{k: meta[k] for k in ('epoch', 'iter') if isinstance(meta.get(k), int)})
    return dict(kind=EVALUATION, id=uuid.uuid4().hex[:16], checkpoint=checkpoint)


def write_result(work_dir: str, record: dict) -> str:
    path = osp.join(work_dir, 'result.json')
    atomic_write_text(json.dumps(record, indent=2, sort_keys=False) + '\n', path)
    return path
