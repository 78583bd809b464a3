"""The benchmark pipeline: a config of stages (``spec``: loading and checking it) run in dependency order as
tools/train.py / tools/test.py processes (``run``)."""
