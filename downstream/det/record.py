"""The record of detection and instance segmentation (vitbench/results/schema.py): box and mask AP on COCO, which
mmdet reports as fractions under 'coco/', and a head that runs mmcv's RoIAlign / nms. Torch-free, importing only
the schema: a reader of results loads this file without the package (harness/tasks.py); importing
:mod:`downstream.det` registers it too."""
from vitbench.results.schema import Kind, Metric, Plot, Task, register

_PLOT = Plot('bars', 'Detection and instance segmentation AP', 'AP', order=2)
BOX = Kind('box', 'box AP', aggregate_suffix='_box', plot=_PLOT)
MASK = Kind('mask', 'mask AP', beside='box', aggregate_suffix='_mask', plot=_PLOT)

DET = register(Task('det', 'detection', (Metric('bbox_mAP', BOX), Metric('segm_mAP', MASK)), order=400,
                    fraction_prefixes=('coco/',), datasets=(('coco', 'COCO'),), demo_datasets=('coco-demo',),
                    downstream=True, shown_metrics=2, roi_ops=True))
