"""The record of semantic segmentation (vitbench/results/schema.py): mIoU on ADE20k, drawn against GFLOPs.
Torch-free, importing only the schema: a reader of results loads this file without the package (harness/tasks.py);
importing :mod:`downstream.seg` registers it too."""
from vitbench.results.schema import Kind, Metric, Plot, Task, register

MIOU = Kind('seg', 'mIoU', eval_always=True, plot=Plot('scatter', 'Segmentation mIoU vs backbone GFLOPs',
                                                       'mIoU (%)', order=0))

SEG = register(Task('seg', 'segmentation', (Metric('mIoU', MIOU),), order=300, datasets=(('ade20k', 'ADE20k'),),
                    demo_datasets=('ade20k-demo',), downstream=True))
