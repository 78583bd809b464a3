"""The records of ImageNet pre-training and fine-tuning (vitbench/results/schema.py): their headline metrics on
ImageNet and its test sets, the column kinds they share (``cls`` top-1, mCE, ECE) and how the leaderboard reads
them. Torch-free, importing only the schema: a reader of results loads this file without the package
(harness/tasks.py); importing :mod:`pretrain` registers it too."""
from vitbench.results.schema import Kind, Metric, Plot, Task, register

TOP1 = Kind('cls', 'top-1', plot=Plot('bars', 'ImageNet top-1', 'top-1 (%)', order=3))
MCE = Kind('mce', 'mCE', lower_is_better=True, aggregate_suffix='_mce', robustness=True)  # ImageNet-C's mean corruption error
ECE = Kind('ece', 'ECE', lower_is_better=True, aggregate_suffix='_ece', robustness=True)  # the calibration error on ImageNet val
IMAGENET = (Metric('top1', TOP1), Metric('top1_v2', TOP1, 'v2'), Metric('top1_real', TOP1, 'real'),
            Metric('top1_a', TOP1, 'A'), Metric('top1_r', TOP1, 'R'), Metric('top1_sketch', TOP1, 'sketch'),
            Metric('mCE', MCE, percent=False), Metric('mCE_partial', MCE, 'some corruptions', percent=False),
            Metric('ece', ECE))

PRETRAIN = register(Task('pretrain', 'pre-training', IMAGENET, order=100, datasets=(('imagenet', 'ImageNet'),),
                         demo_datasets=('imagenet',), pretrains=True))
FINETUNE = register(Task('finetune', 'fine-tuning', IMAGENET, order=200, finetunes=True))
