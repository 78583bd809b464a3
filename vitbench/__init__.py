"""vitbench's shared core, one concern per sub-package, below every model and task (docs/architecture.md
draws the layers): ``fileio`` (the one atomic writer), ``compat`` (every reach into upstream internals),
``results`` (result.json vocabulary, leaderboard), ``registry`` (the ``vitbench`` registries) and ``engine``
(checkpoint policy, CPU AMP, layer decay). It imports no model, recipe or task; what drives whole runs
(one experiment, the pipeline, the demo data) is the ``harness`` package, above the tasks.
"""
