"""A training whose loss stops being a number is stopped, and recorded as diverged, never as a result.

:class:`DivergenceHook` (added to every run by ``harness.experiment.cli.build_runner``) reads the loss of each
training iteration. After ``patience`` non-finite losses in a row (NaN or ±inf; one by default: a float16 run's
loss scaler skips overflowing *gradients*, not losses) it writes the run's ``result.json`` with
``"status": "diverged"`` and where (the iteration, the loss, the last finite loss and its iteration), and raises
:class:`TrainingDiverged`: no later checkpoint, no ``backbone.pth`` export, no metrics. ``tools/train.py`` turns it
into one line and exit status 3; the pipeline reports the stage as diverged and the leaderboard shows the cell as
such. A run with ``patience`` > 1 set in its config: ``custom_hooks = [dict(type='vitbench.DivergenceHook',
patience=5)]``.
"""
import math
from typing import Optional, Tuple

from mmengine.hooks import Hook

from harness.experiment.result_record import record_divergence
from vitbench.registry import HOOKS


class TrainingDiverged(RuntimeError):
    """The loss stopped being finite; the message says at which iteration and what the last finite loss was."""


def _loss_of(outputs) -> Optional[float]:
    loss = outputs.get('loss') if isinstance(outputs, dict) else None
    if loss is None:
        return None
    return float(loss.detach().float().mean()) if hasattr(loss, 'detach') else float(loss)


@HOOKS.register_module()
class DivergenceHook(Hook):
    """Args:
        patience: non-finite losses in a row that stop the run (>= 1).
    """
    priority = 'VERY_HIGH'  # before the checkpoint and logger hooks of the same iteration

    def __init__(self, patience: int = 1):
        if not isinstance(patience, int) or patience < 1:
            raise ValueError(f'DivergenceHook: patience is {patience!r}, expected a whole number >= 1')
        self.patience = patience
        self._bad = 0
        self._last_finite: Optional[Tuple[int, float]] = None

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        loss = _loss_of(outputs)
        if loss is None:
            return
        iteration = runner.iter + 1
        if math.isfinite(loss):
            self._bad, self._last_finite = 0, (iteration, loss)
            return
        self._bad += 1
        if self._bad < self.patience:
            return
        last = (f'the last finite loss was {self._last_finite[1]:.4g} at iteration {self._last_finite[0]}'
                if self._last_finite else 'no loss of this run was finite')
        message = (f'training diverged: the loss is {loss} at iteration {iteration}'
                   + (f' ({self._bad} non-finite in a row)' if self._bad > 1 else '') + f'; {last}. '
                   'Nothing was exported; lower the learning rate or check the data')
        record_divergence(runner, dict(iteration=iteration, loss=str(loss),
                                       last_finite_iteration=self._last_finite[0] if self._last_finite else None,
                                       last_finite_loss=self._last_finite[1] if self._last_finite else None))
        raise TrainingDiverged(message)
