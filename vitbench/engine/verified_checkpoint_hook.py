"""``VerifiedCheckpointHook``: mmengine's CheckpointHook whose ``last_checkpoint`` pointer names the checkpoint
relative to the work dir, written atomically (``vitbench.engine.checkpoint_integrity``).

mmengine writes the absolute path with a plain ``open``: after ``cp -a run branch``, ``--resume`` in branch loaded
run's checkpoint (an INFO line only), and a run killed while writing the pointer left it empty. ``build_runner``
(``harness/experiment/cli.py``) gives every config whose ``default_hooks.checkpoint`` is mmengine's CheckpointHook
this one, with the same arguments. (The hash beside each checkpoint is written by the atomic file backend, for
every ``.pth`` mmengine saves, best checkpoints included.)
"""
from mmengine.dist import is_main_process
from mmengine.hooks import CheckpointHook

from vitbench.registry import HOOKS

from .checkpoint_integrity import write_pointer


@HOOKS.register_module()
class VerifiedCheckpointHook(CheckpointHook):

    def _save_checkpoint_with_step(self, runner, step, meta):
        super()._save_checkpoint_with_step(runner, step, meta)  # saves, then writes mmengine's absolute pointer
        if is_main_process() and self.last_ckpt is not None:
            write_pointer(runner.work_dir, self.last_ckpt)
