"""Features of a dataset computed once per run and cached in the work dir, keyed by the weights and the data.

The key is a digest of the model's state (the checkpoint as loaded: any backbone, with or without a file) and a
fingerprint of the dataset (its class, root, split, the ids and labels of its images and its test pipeline): the
same weights on the same images reuse ``work_dir/features/<key>.npz``, anything else computes afresh.

On several processes each computes the features of its share of the images (mmengine's ``DefaultSampler``) and
they are gathered, in the dataset's order, on every process: the k-NN's memory and the probe's data are the whole
collection whatever the number of processes (the test set is dealt out again by :class:`.loop.FrozenFeatureLoop`).
"""
import hashlib
import io
import os
import os.path as osp
import re
from typing import Dict

import numpy as np
import torch
from mmengine.dataset import DefaultSampler
from mmengine.dist import all_gather, all_gather_object, get_world_size, is_main_process
from mmengine.logging import print_log

from vitbench.fileio import atomic_write_bytes
from vitbench.results.per_image import image_id


def model_digest(model: torch.nn.Module) -> str:
    """sha1 of the model's tensors, in key order."""
    digest = hashlib.sha1()
    for key, value in model.state_dict().items():
        digest.update(key.encode())
        digest.update(value.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def dataset_fingerprint(dataset, label_key: str = 'gt_label') -> str:
    """sha1 of what decides a dataset's features and labels."""
    pipeline = re.sub(r' at 0x[0-9a-fA-F]+', '', repr(getattr(dataset, 'pipeline', '')))  # no object addresses
    digest = hashlib.sha1(repr((type(dataset).__name__, getattr(dataset, 'data_root', ''),
                                getattr(dataset, 'split', ''), pipeline)).encode())
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        digest.update(f"{info.get('img_path', i)}:{info.get(label_key)};".encode())
    return digest.hexdigest()[:16]


@torch.no_grad()
def extract(model, dataloader, label_key: str = 'gt_label') -> Dict[str, np.ndarray]:
    """features (N, D) float32, labels (N,) and ids (N,) of every image of ``dataloader``, in its order."""
    model.eval()
    features, labels, ids = [], [], []
    for batch in dataloader:
        data = model.data_preprocessor(batch, False)
        features.append(model.embed(data['inputs']).float().cpu())
        samples = data['data_samples']  # PackInputs' dicts, collated: a tensor of labels and a list of paths
        labels += [int(y) for y in samples[label_key]]
        ids += [image_id(str(path)) for path in samples['img_path']]
    return dict(features=torch.cat(features).numpy(), labels=np.asarray(labels), ids=np.asarray(ids))


def gathered(found: Dict[str, np.ndarray], dataloader) -> Dict[str, np.ndarray]:
    """Every process's :func:`extract` of its share, in the dataset's order, on every process. ``DefaultSampler``
    without shuffling deals image ``i`` to process ``i % world_size`` and pads the last round with the first
    images: interleaving the equal shares and cutting at the dataset's length gives the dataset back."""
    world = get_world_size()
    if world == 1:
        return found
    sampler = getattr(dataloader, 'sampler', None)
    if not isinstance(sampler, DefaultSampler) or sampler.shuffle:
        raise ValueError(f'frozen features on {world} processes: the dataloader of {type(dataloader.dataset).__name__} '
                         f'must sample with DefaultSampler(shuffle=False), got {type(sampler).__name__} '
                         f"(shuffle={getattr(sampler, 'shuffle', None)})")
    size = len(dataloader.dataset)
    out = {}
    for name in ('features', 'labels'):
        parts = all_gather(torch.from_numpy(np.ascontiguousarray(found[name])))
        out[name] = torch.stack(parts, dim=1).flatten(0, 1)[:size].numpy()
    ids = all_gather_object(list(found['ids']))
    out['ids'] = np.asarray([i for row in zip(*ids) for i in row][:size])
    return out


def cached_features(model, dataloader, work_dir: str, label_key: str = 'gt_label') -> Dict[str, np.ndarray]:
    """:func:`extract` (:func:`gathered` across processes), read from ``work_dir/features/`` when these weights
    already ran on this data (and every process sees the file: the processes take one branch or the other
    together)."""
    key = f'{model_digest(model)}_{dataset_fingerprint(dataloader.dataset, label_key)}'
    path = osp.join(work_dir, 'features', f'{key}.npz')
    if all(all_gather_object(osp.isfile(path))):
        with np.load(path, allow_pickle=False) as npz:
            print_log(f'frozen features: read {path}', logger='current')
            return {k: npz[k] for k in npz.files}
    found = gathered(extract(model, dataloader, label_key), dataloader)
    if is_main_process():  # one writer of the shared file
        os.makedirs(osp.dirname(path), exist_ok=True)
        buffer = io.BytesIO()
        np.savez(buffer, **found)
        atomic_write_bytes(buffer.getvalue(), path)
        print_log(f'frozen features: {len(found["labels"])} images computed, cached in {path}', logger='current')
    return found
