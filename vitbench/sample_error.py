"""A sample that cannot be read stops the run with one line: the dataset, the sample, its files, the problem and
how to check the whole folder, instead of a traceback from inside a decoder that names no file (a truncated ADE20k
annotation PNG gave 25 frames ending in ``OSError: image file is truncated``).

The datasets of the suite read each sample through :func:`prepare_named` (ImageNet and its variants, ADE20k, COCO,
the transfer sets); ``harness.experiment.cli.run_main`` prints :class:`SampleError` as ``error: ...`` with exit
status 2, also when a dataloader worker raised it (PyTorch re-raises it in the main process with the worker's
traceback in front of the message: :func:`one_line` takes the message back out).
"""
from typing import Callable

CHECK_HINT = 'python tools/make_demo_data.py --check {root} --dataset NAME checks every file of a dataset folder'


class SampleError(ValueError):
    """A sample that cannot be read; the message names the dataset, the index and the files."""


def prepare_named(dataset, idx: int, prepare: Callable):
    """``prepare(idx)`` (a dataset's own ``prepare_data``), with any failure of reading or transforming the sample
    raised as a :class:`SampleError` naming it."""
    try:
        return prepare(idx)
    except SampleError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever the decoders raise; the message keeps its type and text
        try:
            info = dataset.get_data_info(idx)
        except Exception:  # noqa: BLE001 - the index itself is the problem
            info = {}
        files = ', '.join(str(info[k]) for k in ('img_path', 'seg_map_path') if info.get(k)) or 'files unknown'
        root = getattr(dataset, 'data_root', '') or 'DATA_ROOT'
        raise SampleError(f'{type(dataset).__name__} sample {idx} ({files}): {type(e).__name__}: {e}; '
                          + CHECK_HINT.format(root=root)) from e


def one_line(error: SampleError) -> str:
    """The message of ``error`` without the dataloader worker's traceback PyTorch puts in front of it."""
    text = str(error).rstrip()
    marker = f'{SampleError.__name__}: '
    return text.rsplit(marker, 1)[-1] if marker in text else text
