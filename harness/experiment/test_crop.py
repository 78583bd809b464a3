"""``test_crop_ratio``: the ratio of the centre crop the evaluation takes, as one top-level config key (CaiT
Table 4's last step and thesis Table 3.22 compare 0.875, the convnets' and DeiT's default, with 1.0, CaiT's).

The key sets ``crop_pct`` of every ``ResizeCenterCrop`` of the validation and test pipelines, so that a row of a
table changes it with ``--cfg-options test_crop_ratio=0.875`` instead of the pipelines' list entries.
"""
from numbers import Real

KEY = 'test_crop_ratio'
LOADERS = ('val_dataloader', 'test_dataloader')


def apply_test_crop_ratio(cfg) -> int:
    """Set the crop ratio ``cfg.test_crop_ratio`` (absent: nothing changes) in the evaluation pipelines; returns how
    many transforms it set. A value outside (0, 1], or pipelines without a ``ResizeCenterCrop``, raise one line."""
    ratio = cfg.get(KEY)
    if ratio is None:
        return 0
    if isinstance(ratio, bool) or not isinstance(ratio, Real) or not 0 < ratio <= 1:
        raise ValueError(f'{KEY}={ratio!r}: expected the crop ratio, a number in (0, 1] (0.875, 1.0)')
    count = 0
    for loader in LOADERS:
        dataset = (cfg.get(loader) or {}).get('dataset') or {}
        for transform in dataset.get('pipeline') or []:
            if transform.get('type') == 'ResizeCenterCrop':
                transform['crop_pct'] = float(ratio)
                count += 1
    if not count:
        raise ValueError(f'{KEY}={ratio!r}: the config has no ResizeCenterCrop in the pipelines of {LOADERS}')
    return count
