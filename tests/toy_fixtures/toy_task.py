"""A toy downstream task's record, written the way docs/extending-task.md says: monocular depth on a made-up
'toyroom' dataset, with an accuracy (δ1, a percentage its toolbox reports as a fraction under 'toydepth/') and an
error (AbsRel, lower is better, no percentage). tests/test_extending_task.py registers it (``register(TOY_DEPTH)``,
what a built-in task does in vitbench/results/schema.py) and runs it through every reader of results. It needs no
package: a task's package is what it runs on its toolbox, which the readers never import."""
from vitbench.results.schema import Kind, Metric, Plot, Task

TOY_DEPTH = Task(
    'toy_depth', 'toy depth estimation',
    (Metric('delta1', Kind('toy_delta1', 'δ1', plot=Plot('bars', 'Toy depth δ1 per dataset', 'δ1 (%)', order=4))),
     Metric('abs_rel', Kind('toy_abs_rel', 'AbsRel', lower_is_better=True, aggregate_suffix='_absrel'),
            percent=False)),
    fraction_prefixes=('toydepth/',), datasets=(('toyroom', 'ToyRoom'),), demo_datasets=('toyroom-demo',),
    downstream=True, shown_metrics=2)
