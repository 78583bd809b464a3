"""The learning-rate curve a training will follow, computed before it starts from its real iterations per epoch
and world size, and refused when it does not do what the config says.

mmengine converts an epoch-based scheduler to iterations by truncating ``begin`` and ``end`` (``int(0.5 * 3)``
= 1) and its schedulers are chained (each multiplies the learning rate the previous one left). A warm-up that
rounds to a single iteration therefore multiplies the learning rate by its ``start_factor`` and never takes it
back: ``configs/demo/transfer_cifar10_demo.py`` (warm-up 0.5 epoch from x0.01, then cosine) trains its whole run
at 1 % of its learning rate when an epoch has 3 iterations or fewer (two processes, or a batch of 64); so does an
epoch-stepped ``LinearLR`` with ``end=1``. One that rounds to no iteration stops mmengine with a traceback.

:func:`lr_curve` builds the run's own schedulers (mmengine's registry and conversion, as the Runner builds them)
on a one-parameter optimizer and steps them as mmengine's ``ParamSchedulerHook`` does, for the run's real number
of iterations. :func:`check_schedule` compares that curve with the same schedule at a fine resolution (every
epoch-based scheduler converted to iterations, :data:`REFERENCE_ITERS_PER_EPOCH` an epoch, where rounding
cannot matter): a curve whose peak is below :data:`PEAK_TOLERANCE` of the intended one is refused in one line,
unless the config steps schedulers per epoch and stepping them per iteration (``convert_to_iter_based=True``)
gives the intended peak: then they are converted, and the log says so. ``result.json`` records the curve's peak
and end (``lr``).
"""
import copy
import warnings
import weakref
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
from mmengine.optim import OptimWrapper
from mmengine.registry import PARAM_SCHEDULERS

REFERENCE_ITERS_PER_EPOCH = 100  # the resolution of the intended curve: rounding moves a boundary <= 1 %
PEAK_TOLERANCE = 0.95  # the run's peak learning rate must reach this fraction of the intended peak

_CURVES = weakref.WeakKeyDictionary()  # runner -> its LrCurve, for result.json (never pickled into checkpoints)


class ScheduleError(ValueError):
    """A schedule that would not do what its config says (one line)."""


@dataclass
class LrCurve:
    lrs: List[float]  # the first parameter group's learning rate at each training iteration
    iters_per_epoch: Optional[int]  # per process; None for an iteration-based loop
    world_size: int
    spans: List[Tuple[int, int, bool]]  # each scheduler's (begin, end, by_epoch) as built

    @property
    def peak(self) -> float:
        return max(self.lrs) if self.lrs else 0.0

    def record(self) -> dict:
        """``result.json``'s ``lr``."""
        peak_at = max(range(len(self.lrs)), key=self.lrs.__getitem__) if self.lrs else None
        return dict(peak=self.peak, peak_iteration=peak_at, end=self.lrs[-1] if self.lrs else None,
                    iterations=len(self.lrs), iters_per_epoch=self.iters_per_epoch, world_size=self.world_size)


def _as_list(schedulers) -> Optional[list]:
    if isinstance(schedulers, dict) and 'type' in schedulers:
        return [schedulers]
    if isinstance(schedulers, (list, tuple)) and all(isinstance(s, dict) and 'type' in s for s in schedulers):
        return list(schedulers)
    return None  # none, built objects, or one list per optimizer: not checked


def base_lr(cfg, world_size: int) -> Optional[float]:
    """The optimizer's learning rate as the Runner will set it (``auto_scale_lr`` applied, as Runner.scale_lr)."""
    optimizer = (cfg.get('optim_wrapper') or {}).get('optimizer')
    lr = optimizer.get('lr') if isinstance(optimizer, dict) else None
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or lr <= 0:
        return None
    scale = cfg.get('auto_scale_lr') or {}
    batch = (cfg.get('train_dataloader') or {}).get('batch_size')
    if scale.get('enable', False) and scale.get('base_batch_size') and batch:
        lr = lr * world_size * batch / scale['base_batch_size']
    return float(lr)


def lr_curve(schedulers: list, lr: float, iters_per_epoch: int, max_epochs: Optional[int],
             max_iters: Optional[int], world_size: int = 1) -> LrCurve:
    """The learning rate at each iteration of a training with these scheduler configs: an epoch-based loop
    (``max_epochs`` of ``iters_per_epoch``) or an iteration-based one (``max_iters``; epoch-stepped schedulers do
    not step in it). Raises what mmengine raises for a scheduler it cannot build (e.g. ``end <= begin``)."""
    parameter = torch.nn.Parameter(torch.zeros(1))
    wrapper = OptimWrapper(torch.optim.SGD([parameter], lr=lr, momentum=0.9))  # momentum: for momentum schedulers
    built = []
    for scheduler in schedulers:  # as Runner._build_param_scheduler: the loop's length is the default end
        scheduler = copy.deepcopy(dict(scheduler))
        scheduler.setdefault('end', max_epochs if scheduler.get('by_epoch', True) else max_iters)
        built.append(PARAM_SCHEDULERS.build(scheduler, default_args=dict(optimizer=wrapper,
                                                                          epoch_length=iters_per_epoch)))
    group, lrs = wrapper.optimizer.param_groups[0], []
    epochs, per_epoch = (max_epochs, iters_per_epoch) if max_epochs is not None else (1, max_iters)
    with warnings.catch_warnings():  # "scheduler.step() before optimizer.step()": nothing is optimized here
        warnings.simplefilter('ignore')
        for _ in range(epochs):  # as mmengine's ParamSchedulerHook steps them
            for _ in range(per_epoch):
                lrs.append(group['lr'])
                for s in built:
                    if not s.by_epoch:
                        s.step()
            if max_epochs is not None:
                for s in built:
                    if s.by_epoch:
                        s.step()
    return LrCurve(lrs, iters_per_epoch if max_epochs is not None else None, world_size,
                   [(s.begin, s.end, s.by_epoch) for s in built])


def _converted(schedulers: list) -> list:
    """Every epoch-based scheduler stepped per iteration instead (mmengine's ``convert_to_iter_based``)."""
    return [dict(s, convert_to_iter_based=True) if s.get('by_epoch', True) else dict(s) for s in schedulers]


def _describe(i: int, scheduler: dict) -> str:
    unit = 'epoch' if scheduler.get('by_epoch', True) else 'iteration'
    return (f"param_scheduler.{i} ({scheduler['type']}, {unit}s {scheduler.get('begin', 0)}-"
            f"{scheduler.get('end', 'end')})")


def check_schedule(cfg, iters_per_epoch: int, world_size: int) -> Tuple[Optional[LrCurve], Optional[list], str]:
    """(the run's curve, the scheduler configs to use instead or None, a line for the log or '') for a training of
    ``cfg`` whose epochs have ``iters_per_epoch`` iterations per process; raises :class:`ScheduleError`, one line,
    for a schedule that would not do what it says. (None, None, '') where there is nothing to check."""
    schedulers = _as_list(cfg.get('param_scheduler'))
    lr = base_lr(cfg, world_size)
    loop = cfg.get('train_cfg') or {}
    by_epoch = loop.get('by_epoch', loop.get('type', 'EpochBasedTrainLoop') == 'EpochBasedTrainLoop')
    max_epochs, max_iters = (loop.get('max_epochs'), None) if by_epoch else (None, loop.get('max_iters'))
    if schedulers is None or lr is None or not isinstance(max_epochs or max_iters, int):
        return None, None, ''
    where = (f'{iters_per_epoch} iteration{"s" if iters_per_epoch != 1 else ""} an epoch per process '
             f'(train_dataloader.batch_size={cfg.train_dataloader.get("batch_size")}, {world_size} '
             f'process{"es" if world_size > 1 else ""})')
    for i, scheduler in enumerate(schedulers):  # one that mmengine cannot build at this length, named
        try:
            lr_curve([scheduler], lr, iters_per_epoch, max_epochs, max_iters, world_size)
        except (ValueError, AssertionError, ZeroDivisionError) as e:
            raise ScheduleError(f'{_describe(i, scheduler)} rounds to no iteration at {where}: {e}; lengthen it '
                                'or use a smaller batch') from None
    curve = lr_curve(schedulers, lr, iters_per_epoch, max_epochs, max_iters, world_size)
    if max_epochs is None:
        return curve, None, ''  # an iteration-based loop: nothing rounds (epoch-stepped schedulers never step)
    reference = curve
    if iters_per_epoch < REFERENCE_ITERS_PER_EPOCH or any(s.get('by_epoch', True) for s in schedulers):
        reference = lr_curve(_converted(schedulers), lr, REFERENCE_ITERS_PER_EPOCH, max_epochs, None, world_size)
    if curve.peak >= PEAK_TOLERANCE * reference.peak:
        return curve, None, ''
    unconverted = [s for s in schedulers if s.get('by_epoch', True) and not s.get('convert_to_iter_based')]
    if unconverted:
        converted = _converted(schedulers)
        fixed = lr_curve(converted, lr, iters_per_epoch, max_epochs, max_iters, world_size)
        if fixed.peak >= PEAK_TOLERANCE * reference.peak:
            names = ', '.join(_describe(i, s) for i, s in enumerate(schedulers) if s in unconverted)
            return fixed, converted, (
                f'param_scheduler: stepped per epoch, the learning rate would peak at {curve.peak:.3g} instead of '
                f'{reference.peak:.3g} at {where}; {names} converted to iterations (convert_to_iter_based=True): '
                f'peak {fixed.peak:.3g}, end {fixed.lrs[-1]:.3g}')
    short = [_describe(i, s) for i, s in enumerate(schedulers) if curve.spans[i][1] - curve.spans[i][0] <= 1
             and reference.spans[i][1] - reference.spans[i][0] > 1]
    culprit = (f'{", ".join(short)} rounds to a single step, which chained schedulers never undo; '
               if short else '')
    raise ScheduleError(
        f'param_scheduler: at {where} the learning rate would never reach its peak: {culprit}it would peak at '
        f'{curve.peak:.3g} (x{curve.peak / lr:.3g} of optim_wrapper.optimizer.lr) instead of {reference.peak:.3g}, '
        f'and end at {curve.lrs[-1]:.3g}; lengthen the warm-up (its end, and the begin of the scheduler after it) '
        'to at least 2 iterations, or use a smaller batch')


def remember(runner, curve: Optional[LrCurve]) -> None:
    if curve is not None:
        _CURVES[runner] = curve


def recorded_curve(runner) -> Optional[dict]:
    """``result.json``'s ``lr`` for this runner's training (None when it was not computed)."""
    curve = _CURVES.get(runner)
    return None if curve is None else curve.record()
