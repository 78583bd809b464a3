"""The toy depth task's record: an accuracy (δ1, a percentage its metric reports as a fraction under 'toydepth/', as
mmdet reports COCO AP under 'coco/') and an error (AbsRel, lower is better, no percentage). Torch-free, importing
only the schema, as a record module of the suite is."""
from vitbench.results.schema import Kind, Metric, Plot, Task, register

TOY_DEPTH = register(Task(
    'toy_depth', 'toy depth estimation',
    (Metric('delta1', Kind('toy_delta1', 'δ1', plot=Plot('bars', 'Toy depth δ1 per dataset', 'δ1 (%)', order=4))),
     Metric('abs_rel', Kind('toy_abs_rel', 'AbsRel', lower_is_better=True, aggregate_suffix='_absrel'),
            percent=False)),
    fraction_prefixes=('toydepth/',), datasets=(('toyroom', 'ToyRoom'),), demo_datasets=('toyroom-demo',),
    downstream=True, shown_metrics=2))
