#!/usr/bin/env python
"""Report the versions of the stack, whether mmcv's compiled ops run (and have CUDA kernels), and the hardware.

    python tools/env_check.py        # exit 0 when everything works, 1 with the reasons otherwise
"""
import importlib
import importlib.metadata
import importlib.util
import os
import platform
import sys

# Import name -> distribution name, for the packages whose versions matter.
PACKAGES = {'torch': 'torch', 'torchvision': 'torchvision', 'mmengine': 'mmengine', 'mmcv': 'mmcv',
            'mmseg': 'mmsegmentation', 'mmdet': 'mmdet', 'timm': 'timm', 'pycocotools': 'pycocotools'}


# Next to tools/: the repository in a checkout, vitbench/.mim/ in an installed wheel (vitbench/console.py).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCK = 'requirements.lock'


def locked_versions():
    """The versions of requirements.lock, the set vitbench is tested with ({distribution: version}); {} without it."""
    path = os.path.join(ROOT, LOCK)
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        lines = [line.split('#')[0].strip() for line in f]
    return {_normal(name): version.strip() for name, sep, version in (line.partition('==') for line in lines) if sep}


def declared_requirements():
    """The requirements vitbench declares (pyproject.toml's ranges): as the installed vitbench declares them, else
    (vitbench run from a checkout through PYTHONPATH, as on a GPU image set up by tools/install_offline.sh) as the
    checkout's pyproject.toml says. Raises PackageNotFoundError when neither is there."""
    try:
        requirements = importlib.metadata.requires('vitbench') or []
    except importlib.metadata.PackageNotFoundError:
        pyproject = os.path.join(ROOT, 'pyproject.toml')
        if importlib.util.find_spec('vitbench') is None or not os.path.isfile(pyproject):
            raise
        import tomllib
        with open(pyproject, 'rb') as f:
            requirements = tomllib.load(f)['project']['dependencies']
        print(f'  vitbench     from the checkout {ROOT} (not installed)')
    from packaging.requirements import Requirement
    declared = {}
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({'extra': ''}):  # not an extra's
            declared[_normal(requirement.name)] = requirement
    return declared


def _normal(name: str) -> str:
    return name.strip().lower().replace('_', '-')


def check_packages(problems, notes):
    """A version outside pyproject.toml's ranges is a problem; inside them, one other than the locked version works
    and is noted (a GPU node's image keeps its own torch: tools/install_offline.sh; an existing environment its own
    versions)."""
    try:
        declared = declared_requirements()
    except importlib.metadata.PackageNotFoundError:
        declared = {}
        problems.append('vitbench itself is not installed (run `make install`)')
    locked = locked_versions()
    for name, dist in PACKAGES.items():
        try:
            importlib.import_module(name)
            version = importlib.metadata.version(dist)
        except Exception as e:  # noqa: BLE001 - any failure to import is what we report
            problems.append(f'{name}: cannot be imported ({type(e).__name__}: {e})')
            print(f'  {name:<12} MISSING')
            continue
        pinned, requirement = locked.get(dist), declared.get(dist)
        mismatch = pinned is not None and version.split('+')[0] != pinned
        if requirement is not None and not requirement.specifier.contains(version.split('+')[0], prereleases=True):
            problems.append(f'{dist} {version} installed, vitbench needs {requirement} (pyproject.toml)')
        elif mismatch:
            notes.append(f'{dist} {version} installed, {pinned} in {LOCK}')
        print(f'  {name:<12} {version}' + (f'  (expected {pinned})' if mismatch else ''))


def check_mmcv_ops(problems):
    try:
        import torch
        from mmcv.ops import RoIAlign, nms
        boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
        _, keep = nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
        assert keep.tolist() == [0, 2], f'nms kept {keep.tolist()}, expected [0, 2]'
        feats = torch.arange(16.).view(1, 1, 4, 4)
        rois = torch.tensor([[0., 0., 0., 4., 4.]])
        pooled = RoIAlign((2, 2), spatial_scale=1.0, sampling_ratio=2, aligned=True)(feats, rois)
        assert pooled.shape == (1, 1, 2, 2), f'RoIAlign gave shape {tuple(pooled.shape)}'
        print('  mmcv.ops     nms and RoIAlign run')
    except Exception as e:  # noqa: BLE001
        problems.append(f'mmcv.ops does not run ({type(e).__name__}: {e}); rebuild it with `make install` '
                        '(see docs/getting-started.md, "Troubleshooting the mmcv build")')
        print('  mmcv.ops     BROKEN')
        return
    check_mmcv_cuda_kernels(problems)


def check_mmcv_cuda_kernels(problems):
    """Whether mmcv's ops have CUDA kernels: on a visible GPU, nms must run there (mmdet would otherwise stop at its
    first NMS or RoIAlign on a CUDA tensor). There the kernels are tried rather than asked for: right after mmcv was
    built on an H200 (torch 2.11, CUDA 13), a check that imported mmcv.ops and called ``get_compiling_cuda_version()``
    died of a segmentation fault, while the ops ran through the whole demo."""
    import torch
    if not torch.cuda.is_available():
        from mmcv.ops import get_compiling_cuda_version
        compiled = get_compiling_cuda_version()  # a CPU-only build says 'not available'
        print('  mmcv CUDA    ' + ('none: CPU-only ops' if compiled in ('not available', '', None)
                                   else f'ops compiled for CUDA {compiled}'))
        return
    from mmcv.ops import nms
    try:
        boxes = torch.tensor([[0., 0., 10., 10.], [20., 20., 30., 30.]], device='cuda')
        nms(boxes, torch.tensor([0.9, 0.8], device='cuda'), iou_threshold=0.5)
        print(f'  mmcv CUDA    nms runs on {torch.cuda.get_device_name(0)}')
    except RuntimeError as e:
        if 'not found' in str(e):  # "nms_impl: implementation for device cuda:0 not found."
            print('  mmcv CUDA    none: CPU-only ops')
            problems.append(f'a GPU is visible ({torch.cuda.get_device_name(0)}) but mmcv {_mmcv_version()} has '
                            'CPU-only ops; rebuild it with its CUDA ops: VITBENCH_CUDA=1 make install')
            return
        capability = '.'.join(map(str, torch.cuda.get_device_capability(0)))  # e.g. no kernel image for this GPU
        problems.append(f'mmcv.ops has CUDA kernels but nms fails on the GPU (compute capability {capability}): '
                        f'{type(e).__name__}: {e}; rebuild with TORCH_CUDA_ARCH_LIST={capability} make install')


def _mmcv_version() -> str:
    import mmcv
    return mmcv.__version__


def report_hardware():
    import torch
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    print(f'  python       {sys.version.split()[0]} ({platform.platform()})')
    print(f'  device       {", ".join(gpus) if gpus else "CPU only (no CUDA device)"}')
    print(f'  cpu threads  torch uses {torch.get_num_threads()} of {os.cpu_count()} cores')


def main(argv=()):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)  # no options: --help prints what the check does, without running it
    problems, notes = [], []
    print('vitbench environment')
    check_packages(problems, notes)
    check_mmcv_ops(problems)
    try:
        report_hardware()
    except Exception as e:  # noqa: BLE001
        problems.append(f'torch cannot report the hardware: {e}')
    if notes:
        print('\nNOTES (numbers measured with the locked versions may differ a little):\n'
              + '\n'.join(f'  - {n}' for n in notes))
    if problems:
        print('\nBROKEN:\n' + '\n'.join(f'  - {p}' for p in problems), file=sys.stderr)
        return 1
    print('\nOK')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
