"""What a run's ``result.json`` records of its schedule as run and of the images it was evaluated on, so that the
leaderboard never averages a truncated run, or one evaluated on a subset, with the whole experiment
(:mod:`vitbench.results.experiment`).

``schedule``: ``{"unit": "iter"|"epoch", "run": the iterations (epochs) trained, "configured": the loop's end}``,
null for a test. ``eval_set``: ``{"images": how many, "ids_sha256": the sha256 of their sorted ids (the last two
components of each image's path, as per-image evidence names them, else COCO's image id, else its index), "subset":
whether the dataset was cut to part of itself (mmengine's ``indices``, e.g. ``--cfg-options
val_dataloader.dataset.indices=100``)}``, null for a run without an evaluation.
"""
import hashlib
from typing import Optional

from mmengine.runner import EpochBasedTrainLoop

from vitbench.results.per_image import image_id


def schedule_of(runner) -> Optional[dict]:
    """The schedule the training ran: iterations (or epochs, for an epoch-based loop) done and configured."""
    loop = runner.train_loop
    if loop is None:
        return None
    if isinstance(loop, EpochBasedTrainLoop):
        return dict(unit='epoch', run=int(runner.epoch), configured=int(loop.max_epochs))
    return dict(unit='iter', run=int(runner.iter), configured=int(loop.max_iters))


def _image_key(info: dict, index: int) -> str:
    if info.get('img_path'):
        return image_id(info['img_path'])
    if info.get('img_id') is not None:
        return str(info['img_id'])
    return str(index)  # datasets held in memory (CIFAR): their position


def eval_set_of(dataset) -> Optional[dict]:
    """The fingerprint of the images ``dataset`` holds (see the module); None when it cannot list them."""
    if dataset is None or not hasattr(dataset, 'get_data_info'):
        return None
    keys = sorted(_image_key(dataset.get_data_info(i) or {}, i) for i in range(len(dataset)))
    digest = hashlib.sha256('\n'.join(keys).encode()).hexdigest()[:16]
    return dict(images=len(keys), ids_sha256=digest, subset=getattr(dataset, '_indices', None) is not None)


def evaluated_set(runner, training: bool) -> Optional[dict]:
    """The fingerprint of the set the run's last evaluation used: its validation loop's after training, its test
    loop's after testing."""
    loop = runner.val_loop if training else runner.test_loop
    dataloader = getattr(loop, 'dataloader', None)
    return eval_set_of(getattr(dataloader, 'dataset', None))
