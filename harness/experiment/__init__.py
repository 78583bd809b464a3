"""One experiment run, whatever its task: what tools/train.py and tools/test.py share (config, ``--backbone``,
mmengine's Runner) and the ``result.json`` record it leaves behind."""
