"""The benchmark harness: what drives whole runs, above every model, recipe and task (docs/architecture.md).

- ``experiment``: one run of tools/train.py / tools/test.py (config, ``--backbone``, mmengine's Runner) and the
  ``result.json`` it leaves;
- ``pipeline``: many runs, a checked DAG of stages, locally or on Slurm;
- ``demo_data``: generated datasets in the real on-disk formats;
- ``tasks``: the task records a reader of results knows (the suite's, and those of ``--imports`` modules).

The models, recipes and tasks (``backbones``, ``pretrain``, ``downstream``) and the core (``vitbench``) never
import it.
"""
