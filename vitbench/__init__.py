"""vitbench's shared code, one concern per sub-package (docs/architecture.md draws the layers):

- below the models: ``fileio`` (the one atomic writer), ``compat`` (every reach into upstream internals),
  ``results`` (result.json vocabulary, leaderboard), ``registry`` (the ``vitbench`` registries) and ``engine``
  (checkpoint policy, CPU AMP, layer decay);
- above the tasks: ``experiment`` (one run of tools/train.py / test.py, result.json), ``pipeline`` (many
  runs) and ``demo_data`` (generated datasets in the real formats).
"""
