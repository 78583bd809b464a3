"""The record of classification transfer (vitbench/results/schema.py): top-1 on each transfer dataset. Torch-free,
importing only the schema: a reader of results loads this file without the package (harness/tasks.py); importing
:mod:`downstream.transfer` registers it too."""
from vitbench.results.schema import Kind, Metric, Plot, Task, register

TOP1 = Kind('transfer', 'top-1', plot=Plot('bars', 'Transfer top-1 per dataset', 'top-1 (%)', order=1))

TRANSFER = register(Task(
    'transfer', 'transfer', (Metric('top1', TOP1),), order=500,
    datasets=(('cifar10', 'CIFAR-10'), ('cifar100', 'CIFAR-100'), ('flowers102', 'Flowers-102'), ('cars', 'Cars'),
              ('pets', 'Pets'), ('aircraft', 'Aircraft'), ('inat2018', 'iNat-18'), ('inat2019', 'iNat-19')),
    demo_datasets=('cifar10', 'flowers102'), downstream=True))
