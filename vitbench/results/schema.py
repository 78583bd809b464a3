"""The result.json schema's shared vocabulary, written once: the tasks a run can be, and each task's headline
metrics with the leaderboard column kind they fill. ``vitbench.experiment.result_record`` writes records with
these tasks, ``vitbench.results.table`` ranks them and ``vitbench.pipeline.record`` summarises stages by them.
The full record is described in docs/architecture.md."""

TASKS = ('pretrain', 'finetune', 'seg', 'det', 'transfer')
# result.json "status" of a training stopped because its loss stopped being finite (vitbench.experiment.divergence);
# a record without "status" is of a run that finished
DIVERGED = 'diverged'
DIVERGED_EXIT_STATUS = 3  # tools/train.py's exit status then; the pipeline reports the stage as diverged
KINDS = ('cls', 'seg', 'box', 'mask', 'transfer')  # leaderboard column kinds
# task -> its headline metrics, as (metric name in result.json, column kind)
HEADLINE_METRICS = {
    'pretrain': (('top1', 'cls'), ('top1_v2', 'cls'), ('top1_real', 'cls')),
    'finetune': (('top1', 'cls'), ('top1_v2', 'cls'), ('top1_real', 'cls')),
    'seg': (('mIoU', 'seg'),),
    'det': (('bbox_mAP', 'box'), ('segm_mAP', 'mask')),
    'transfer': (('top1', 'transfer'),),
}
# metrics measured on another test set of the run's dataset: their column's eval (beside ImageNet top-1, labelled
# "ImageNet top-1 (v2)"), in place of the record's
METRIC_EVALS = {'top1_v2': 'v2', 'top1_real': 'real'}
