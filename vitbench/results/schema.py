"""The result.json schema's shared vocabulary, written once: the tasks a run can be, and each task's headline
metrics with the leaderboard column kind they fill. ``vitbench.experiment.result_record`` writes records with
these tasks, ``vitbench.results.table`` ranks them and ``vitbench.pipeline.record`` summarises stages by them.
The full record is described in docs/architecture.md."""

TASKS = ('pretrain', 'finetune', 'seg', 'det', 'transfer')
# result.json "status" of a training stopped because its loss stopped being finite (vitbench.experiment.divergence);
# a record without "status" is of a run that finished
DIVERGED = 'diverged'
DIVERGED_EXIT_STATUS = 3  # tools/train.py's exit status then; the pipeline reports the stage as diverged
# leaderboard column kinds: ImageNet top-1 (val, V2, ReaL, A, R, Sketch), ImageNet-C's mCE, the calibration error on
# ImageNet val, then the downstream tasks
KINDS = ('cls', 'mce', 'ece', 'seg', 'box', 'mask', 'transfer')
LOWER_IS_BETTER = ('mce', 'ece')  # column kinds whose best value is the smallest
_IMAGENET = (('top1', 'cls'), ('top1_v2', 'cls'), ('top1_real', 'cls'), ('top1_a', 'cls'), ('top1_r', 'cls'),
             ('top1_sketch', 'cls'), ('mCE', 'mce'), ('mCE_partial', 'mce'), ('ece', 'ece'))
# task -> its headline metrics, as (metric name in result.json, column kind)
HEADLINE_METRICS = {
    'pretrain': _IMAGENET,
    'finetune': _IMAGENET,
    'seg': (('mIoU', 'seg'),),
    'det': (('bbox_mAP', 'box'), ('segm_mAP', 'mask')),
    'transfer': (('top1', 'transfer'),),
}
# metrics measured on another test set of the run's dataset: their column's eval (beside ImageNet top-1, labelled
# "ImageNet top-1 (v2)"), in place of the record's
METRIC_EVALS = {'top1_v2': 'v2', 'top1_real': 'real', 'top1_a': 'A', 'top1_r': 'R', 'top1_sketch': 'sketch',
                'mCE_partial': 'some corruptions'}
# headline metrics that are no percentage in [0, 100]: mCE is relative to AlexNet's errors (AlexNet: 100)
UNBOUNDED_METRICS = ('mCE', 'mCE_partial')
