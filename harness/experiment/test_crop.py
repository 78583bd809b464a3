"""The evaluation's centre crop as top-level config keys: ``test_crop_ratio`` (CaiT Table 4's last step and thesis
Table 3.22 compare 0.875, the convnets' and DeiT's default, with 1.0, CaiT's) and ``test_img_size`` (Table 4's
"inference at higher resolution [256]": a model trained at 224 evaluated at 256, its position embeddings
interpolated at run time).

They set ``crop_pct`` / ``size`` of every ``ResizeCenterCrop`` of the validation and test pipelines, so that a row
of a table changes them with ``--cfg-options test_crop_ratio=0.875`` instead of the pipelines' list entries.
"""
from numbers import Real

KEY = 'test_crop_ratio'
SIZE_KEY = 'test_img_size'
LOADERS = ('val_dataloader', 'test_dataloader')


def apply_test_crop_ratio(cfg) -> int:
    """Set the crop ratio ``cfg.test_crop_ratio`` and the crop size ``cfg.test_img_size`` (absent: nothing changes)
    in the evaluation pipelines; returns how many transforms they set. A ratio outside (0, 1], a size that is not a
    positive int, or pipelines without a ``ResizeCenterCrop``, raise one line."""
    ratio, size = cfg.get(KEY), cfg.get(SIZE_KEY)
    if ratio is None and size is None:
        return 0
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, Real) or not 0 < ratio <= 1):
        raise ValueError(f'{KEY}={ratio!r}: expected the crop ratio, a number in (0, 1] (0.875, 1.0)')
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError(f'{SIZE_KEY}={size!r}: expected the evaluation crop side in pixels, a positive int (256)')
    count = 0
    for loader in LOADERS:
        dataset = (cfg.get(loader) or {}).get('dataset') or {}
        for transform in dataset.get('pipeline') or []:
            if transform.get('type') == 'ResizeCenterCrop':
                if ratio is not None:
                    transform['crop_pct'] = float(ratio)
                if size is not None:
                    transform['size'] = size
                count += 1
    if not count:
        key = KEY if ratio is not None else SIZE_KEY
        raise ValueError(f'{key}: the config has no ResizeCenterCrop in the pipelines of {LOADERS}')
    return count
