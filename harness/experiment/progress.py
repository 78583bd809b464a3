"""How often a training prints its progress (mmengine's LoggerHook line: iteration, ETA, losses, learning rate).

A config's ``default_hooks.logger.interval`` suits the schedule it was written for: 50 iterations of a 160k-iteration
UperNet run. The same interval on a demo schedule of 40 iterations printed two lines, and a pipeline's heartbeat had
no newer progress to show. :func:`pace_progress` lowers the interval of the built LoggerHook so that every run prints
at least about :data:`PROGRESS_LINES` lines (every ``ceil(iterations / PROGRESS_LINES)`` iterations); it never raises
it, so a long run prints no more than its config asks. Only the running hook changes: the config, its saved copy and
the recipe a pipeline compares stay as written.
"""
import math
from typing import Optional

from mmengine.hooks import LoggerHook

PROGRESS_LINES = 10  # at least about this many progress lines per training


def progress_interval(total_iters: int, configured: int) -> int:
    """The logger interval of a training of ``total_iters`` iterations whose config asks for ``configured``."""
    if total_iters <= 0:
        return configured
    return max(1, min(configured, math.ceil(total_iters / PROGRESS_LINES)))


def pace_progress(runner) -> Optional[int]:
    """Set the interval of ``runner``'s LoggerHook from its training's length (its train loop is built: the data
    is); the interval it set, or None without a LoggerHook."""
    hook = next((h for h in runner.hooks if isinstance(h, LoggerHook)), None)
    if hook is None:
        return None
    hook.interval = progress_interval(int(runner.train_loop.max_iters), hook.interval)
    return hook.interval
