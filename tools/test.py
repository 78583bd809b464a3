#!/usr/bin/env python
"""Evaluate a checkpoint on the test split of any vitbench config with mmengine's Runner.

    python tools/test.py CONFIG CHECKPOINT [--work-dir DIR] [--cfg-options K=V ...] [--launcher ...]
    python tools/test.py CONFIG CHECKPOINT --tta    # test-time augmentation, e.g. multi-scale + flip
    python tools/test.py CONFIG CHECKPOINT --show-dir DIR --out FILE.pkl   # draw and keep the predictions

The evaluation is a run of its own: its record, logs and per-image evidence go to WORK_DIR/eval/<checkpoint name>/
(result.json naming the checkpoint it scored and its sha256), never over a training's result.json in WORK_DIR.

--show-dir and --out work as in mmseg's and mmdet's own tools/test.py (the same hooks and metrics), for each task:

  task                --show-dir DIR                              --out
  segmentation        SegVisualizationHook, every test image:     DIR: one PNG label map per image (IoUMetric's
                      DIR/vis_data/vis_image/test_NAME_0.png      output_dir; the dataset's indices, ADE20k 1-150)
  detection           DetVisualizationHook: DIR/NAME              FILE.pkl: DumpDetResults (boxes, scores,
                                                                  labels, RLE masks per image)
  classification      refused: nothing to draw                    FILE.pkl: DumpResults (per image a dict of
  (vitbench configs)                                              pred_score and gt_label)
"""
import argparse
import os.path as osp

from backbones.checkpoint import read_checkpoint
from harness.experiment.cli import ConfigError, add_common_args, build_runner, load_config, run_main
from vitbench.results.schema import evaluation_dir


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser)
    parser.add_argument('checkpoint', help='checkpoint file to evaluate')
    parser.add_argument('--tta', action='store_true',
                        help="test-time augmentation: the config's tta_pipeline and tta_model "
                        '(segmentation: multi-scale + flip)')
    parser.add_argument('--show-dir', metavar='DIR',
                        help="draw every test image's predictions into DIR (segmentation and detection; see the "
                        'table above)')
    parser.add_argument('--out', metavar='FILE.pkl|DIR',
                        help='also save the predictions: detection and classification a pickle FILE.pkl, '
                        'segmentation PNG label maps in DIR (see the table above)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not osp.isfile(args.checkpoint):
        raise ConfigError(f"checkpoint file '{args.checkpoint}' not found")
    cfg = load_config(args)
    cfg.load_from, cfg.resume = args.checkpoint, False
    cfg.work_dir = evaluation_dir(cfg.work_dir, args.checkpoint)  # its own record: a training's stays its own
    record_the_tested_training(cfg, args.checkpoint)
    if args.tta:
        use_tta(cfg)
    if args.show_dir:
        draw_predictions(cfg, args.show_dir)
    if args.out:
        save_predictions(cfg, args.out)
    build_runner(cfg, test_only=True).test()
    if args.show_dir:
        print(f'predictions drawn in {osp.abspath(args.show_dir)}', flush=True)
    if args.out:
        print(f'predictions saved to {osp.abspath(args.out)}', flush=True)


def record_the_tested_training(cfg, checkpoint: str) -> None:
    """result.json reports the weights tested, not the config's schedule: for a pre-training config, the epochs
    the checkpoint trained (mmengine's ``meta['epoch']``), or a vitbench backbone.pth's own ``meta['pretrain']``;
    the config's where the checkpoint does not say, with a line that says so. (A test of a 2-epoch checkpoint
    with a 40-epoch config used to join the 40-epoch row of the leaderboard.)"""
    experiment = cfg.get('experiment') or {}
    if experiment.get('task') != 'pretrain' or not isinstance(experiment.get('pretrain'), dict):
        return  # a downstream config: its record names the backbone weights it started from (their own meta)
    content = read_checkpoint(checkpoint, mmap=True)
    meta = (content.get('meta') if isinstance(content, dict) else None) or {}
    by_epoch = (cfg.get('train_cfg') or {}).get('by_epoch', True)
    if isinstance(meta.get('pretrain'), dict):
        cfg.experiment.pretrain = dict(experiment['pretrain'], **meta['pretrain'])
    elif by_epoch and isinstance(meta.get('epoch'), int):
        cfg.experiment.pretrain.epochs = meta['epoch']
    else:
        print(f"{checkpoint}: its metadata does not say how many epochs it trained; result.json records the "
              f"config's {experiment['pretrain'].get('epochs')}", flush=True)


def use_tta(cfg) -> None:
    """Wrap the model in the config's ``tta_model``, test with its ``tta_pipeline`` (as mmseg's test.py)."""
    missing = [key for key in ('tta_model', 'tta_pipeline') if key not in cfg]
    if missing:
        raise ConfigError(f'--tta: {cfg.filename} has no {" / ".join(missing)} (e.g. tta_model = '
                          "dict(type='SegTTAModel') and a tta_pipeline with a TestTimeAug transform)")
    cfg.test_dataloader.dataset.pipeline = cfg.tta_pipeline
    cfg.model = dict(cfg.tta_model, module=cfg.model)
    if cfg.get('experiment'):
        cfg.experiment.eval = 'ms'  # result.json: multi-scale (+ flip) evaluation


def draw_predictions(cfg, show_dir: str) -> None:
    """--show-dir: switch on the config's own visualization hook in test mode, as mmseg's / mmdet's test.py do."""
    hook = (cfg.get('default_hooks') or {}).get('visualization') or {}
    kind = hook.get('type', '')
    show_dir = osp.abspath(show_dir)
    if kind.endswith('SegVisualizationHook'):
        # mmseg's hook draws only every `interval`-th batch (default 50): every test image here
        hook.update(draw=True, interval=1)
        cfg.visualizer.save_dir = show_dir  # what mmseg's test.py sets: its LocalVisBackend writes the images
    elif kind.endswith('DetVisualizationHook'):
        # absolute: mmdet joins a relative test_out_dir to work_dir/timestamp, again at every batch
        hook.update(draw=True, test_out_dir=show_dir)
    else:
        raise ConfigError(f'--show-dir: {cfg.filename} has no segmentation or detection visualization hook '
                          "(default_hooks.visualization of type SegVisualizationHook or DetVisualizationHook); "
                          'classification predictions have no image to draw: save them with --out FILE.pkl')


def save_predictions(cfg, out: str) -> None:
    """--out: add the metric that saves the predictions to the test evaluator (mmseg's / mmdet's convention)."""
    evaluators = cfg.get('test_evaluator')
    evaluators = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
    pickle = out.endswith(('.pkl', '.pickle'))
    if cfg.get('default_scope') == 'mmseg':
        iou = [m for m in evaluators if isinstance(m, dict) and m.get('type', '').endswith('IoUMetric')]
        if pickle:
            raise ConfigError(f'--out {out}: segmentation predictions are saved as PNG label maps into a directory '
                              "(mmseg's IoUMetric output_dir): name a directory")
        if not iou:
            raise ConfigError(f'--out: {cfg.filename} tests with no IoUMetric, which writes the PNG predictions')
        iou[0]['output_dir'] = osp.abspath(out)
        return
    if not pickle:
        raise ConfigError(f'--out {out}: expected a pickle file name ending in .pkl or .pickle (a directory '
                          'only for segmentation configs)')
    dump = 'DumpDetResults' if cfg.get('default_scope') == 'mmdet' else 'DumpResults'  # mmdet's: RLE masks
    cfg.test_evaluator = [*evaluators, dict(type=dump, out_file_path=osp.abspath(out))]


if __name__ == '__main__':
    run_main(main)
