"""The record of frozen-feature evaluation (vitbench/results/schema.py): a backbone's features, computed once and
never trained, scored by a weighted cosine k-NN, category-level retrieval mAP and a linear probe. Torch-free,
importing only the schema: a reader of results loads this file without the package (harness/tasks.py)."""
from vitbench.results.schema import Kind, Metric, Plot, Task, register

KNN = Kind('knn', 'k-NN top-1', plot=Plot('bars', 'Frozen features: k-NN top-1 per dataset', 'top-1 (%)', order=6))
RETRIEVAL = Kind('retrieval', 'retrieval mAP', beside='knn')
LINEAR = Kind('linear_probe', 'linear probe top-1', beside='retrieval')

FROZEN = register(Task(
    'frozen', 'frozen-feature evaluation',
    (Metric('knn_top1', KNN), Metric('retrieval_map', RETRIEVAL), Metric('linear_top1', LINEAR)), order=600,
    datasets=(('imagenet', 'ImageNet'), ('cifar100', 'CIFAR-100'), ('cifar100-coarse', 'CIFAR-100 (20 coarse)'),
              ('inat2018', 'iNat-18'), ('inat2019', 'iNat-19'), ('cifar10', 'CIFAR-10'),
              ('flowers102', 'Flowers-102'), ('cars', 'Cars'), ('pets', 'Pets'), ('aircraft', 'Aircraft')),
    demo_datasets=('cifar100',), downstream=True, shown_metrics=3))
