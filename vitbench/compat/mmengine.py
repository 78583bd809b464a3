"""mmengine's private internals the suite relies on (written for mmengine 0.10.7; see ``WRITTEN_FOR``)."""
import copyreg
from typing import TYPE_CHECKING, Callable, Optional

# mmengine.logging only: mmengine.runner costs ~0.8 s, which the checkpoint policy's importers
# (tools/convert_checkpoint.py) would pay for the HistoryBuffer reducer alone; the functions that need it import it
from mmengine.logging import HistoryBuffer

if TYPE_CHECKING:
    from mmengine.runner import BaseLoop


def built_train_loop(runner) -> Optional['BaseLoop']:
    """The runner's training loop if ``Runner.train()`` has built it, else None (``test()`` and ``val()`` leave it
    the config it was given).

    Reads ``Runner._train_loop``: the public ``Runner.train_loop`` builds the loop (and its dataloader) when it is
    still a config, which a test run must not do, and no public attribute says whether a training runs."""
    from mmengine.runner import BaseLoop  # imported by the caller's Runner already
    loop = runner._train_loop
    return loop if isinstance(loop, BaseLoop) else None


def resumes_from_latest(runner) -> bool:
    """``--resume`` without a path: the runner will resume from what mmengine's ``last_checkpoint`` names.

    Reads ``Runner._resume`` and ``Runner._load_from``, the constructor's arguments as ``Runner.load_or_resume``
    reads them; no public attribute keeps them (``runner.cfg`` lacks them for a Runner built from arguments)."""
    return bool(runner._resume) and runner._load_from is None


def resumes(runner) -> bool:
    """The runner resumes a training (``--resume``, with or without a path), rather than starting one or loading
    weights only (``load_from``). Reads ``Runner._resume``, as :func:`resumes_from_latest`."""
    return bool(runner._resume)


def wrap_iter_loop_batches(loop, wrap: Callable) -> None:
    """Replace an ``IterBasedTrainLoop``'s batch iterator by ``wrap(iterator)``.

    Relies on ``IterBasedTrainLoop.run`` fetching every batch through ``loop.dataloader_iterator``, the batches
    it skips on a resume included (``next`` once per iteration already trained), from the iterator it built in
    ``__init__``; no hook runs between that skip and the first new batch."""
    loop.dataloader_iterator = wrap(loop.dataloader_iterator)


def run_val_loop(loop, add_metrics: Callable[[dict], None]) -> dict:
    """``ValLoop.run`` of mmengine 0.10.7, copied, with ``add_metrics(metrics)`` called on the metrics before the
    ``after_val_epoch`` hooks see them.

    Copied upstream code, and mmengine's private ``_parse_losses`` (the validation losses as ``run`` reports them):
    no hook runs between the evaluation and ``after_val_epoch``, and the hooks log and record the metrics there."""
    from mmengine.runner.loops import _parse_losses  # imported by the caller's loop already
    loop.runner.call_hook('before_val')
    loop.runner.call_hook('before_val_epoch')
    loop.runner.model.eval()
    loop.val_loss.clear()
    for idx, data_batch in enumerate(loop.dataloader):
        loop.run_iter(idx, data_batch)
    metrics = loop.evaluator.evaluate(len(loop.dataloader.dataset))
    if loop.val_loss:
        metrics.update(_parse_losses(loop.val_loss, 'val'))
    add_metrics(metrics)
    loop.runner.call_hook('after_val_epoch', metrics=metrics)
    loop.runner.call_hook('after_val')
    return metrics


def set_dataset_classes(dataset, classes) -> None:
    """Set a ``BaseDataset``'s ``metainfo['classes']``, from ``load_data_list`` (classes read from the data).

    Writes ``BaseDataset._metainfo``: the public ``metainfo`` is a copy, and the classes are known only once the
    data list is read, after ``__init__`` has set the metainfo."""
    dataset._metainfo['classes'] = classes


def _reduce_history_buffer(buffer: HistoryBuffer):
    # HistoryBuffer(log_history, count_history, max_length) rebuilds it exactly.
    return HistoryBuffer, (*buffer.data, buffer.max_length)


def pickle_history_buffers_by_constructor() -> None:
    """Make every ``HistoryBuffer`` of this process pickle as a call of its constructor (``copyreg``: a global
    change to how an mmengine class pickles).

    Its default pickle restores ``__dict__`` through ``getattr``, which ``torch.load(weights_only=True)`` cannot
    allow without making the safe unpickler unsafe; mmengine has no option to pickle it otherwise. Rebuilt from
    its public ``data`` and ``max_length``, as its constructor takes them."""
    copyreg.pickle(HistoryBuffer, _reduce_history_buffer)
