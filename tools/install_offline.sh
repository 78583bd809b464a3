#!/usr/bin/env bash
# vitbench's stack on a machine with no package index (a GPU node's image, say), into the python there that already
# has torch, torchvision, numpy, scipy, matplotlib and OpenCV: the other packages come as wheels brought along in a
# folder, mmcv as its sdist, compiled there with its ops (CUDA ops when a GPU is visible: 96-200 s for one
# architecture with 15 jobs on an H200 node). vitbench itself runs from the checkout (PYTHONPATH).
#
#   tools/install_offline.sh --download WHEELHOUSE [PYTHON_VERSION]   # on a connected machine (default 3.12)
#   PYTHON=python3 tools/install_offline.sh WHEELHOUSE                # on the offline one
#   export PYTHONPATH=$PWD                                            # then: tools/gpu_check.sh, make demo ...
#
# The versions are requirements.lock's; mmcv's C++ standard follows the torch found there (c++20 from torch 2.14,
# c++17 before). For the project's own pinned torch and a registry, use `make install` instead.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
# name==version from the lock file
pin() { grep -iE "^$1==" "$ROOT/requirements.lock" || { echo "$1: no version in requirements.lock" >&2; exit 1; }; }
say() { printf '\033[1m[install-offline]\033[0m %s\n' "$*"; }
pip_install() { "$PY" -m pip install -q --no-index --no-deps "$@"; }  # install_cuda.sh's name for it

# What such an image lacks (a torch image has the rest): the OpenMMLab stack and what it imports.
PACKAGES=()
for name in mmengine mmsegmentation mmdet timm pycocotools ftfy submitit shapely terminaltables prettytable wcwidth \
            addict yapf termcolor platformdirs; do PACKAGES+=("$(pin "$name")"); done
# the `test` extra's independent references (the tidy-CSV read-back, the k-NN / mAP checks): without them those
# tests skip on the node instead of checking
for name in pandas python-dateutil six tzdata scikit-learn joblib threadpoolctl; do PACKAGES+=("$(pin "$name")"); done

if [[ "${1-}" == --download ]]; then
    dir="${2:?usage: tools/install_offline.sh --download WHEELHOUSE [PYTHON_VERSION]}"
    version="${3:-3.12}"
    mkdir -p "$dir"
    platforms=()
    for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
             manylinux2014_x86_64 manylinux1_x86_64; do platforms+=(--platform "$p"); done
    for package in "${PACKAGES[@]}"; do
        "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$version" --implementation cp \
            "${platforms[@]}" -d "$dir" "$package"
    done
    # the sdist's metadata step imports torch: a python with torch downloads it
    "$PY" -m pip download -q --no-deps --no-binary :all: --no-build-isolation -d "$dir" "$(pin mmcv)"
    say "wheels for Python $version and the mmcv sdist in $dir ($(du -sh "$dir" | cut -f1))"
    exit 0
fi

dir="${1:?usage: tools/install_offline.sh WHEELHOUSE (made by tools/install_offline.sh --download)}"
say "installing $(ls "$dir"/*.whl | wc -l) wheels from $dir into $("$PY" -c 'import sys; print(sys.prefix)')"
pip_install "$dir"/*.whl

if "$PY" -c 'import mmcv.ops, torch; assert not torch.cuda.is_available() or mmcv.ops.get_compiling_cuda_version() != "not available"' 2>/dev/null; then
    say "mmcv with ops already works"
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$dir"/mmcv-*.tar.gz -C "$tmp"
src="$(echo "$tmp"/mmcv-*)"
std="$("$PY" -c 'import torch; print("c++20" if tuple(map(int, torch.__version__.split(".")[:2])) >= (2, 14) else "c++17")')"
sed -i -E "s/-std=c\+\+1[47]/-std=$std/g" "$src/setup.py"
CUDA_BUILD_ENV=()
if "$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())'; then
    VENV="$tmp"  # install_cuda.sh keeps its linker links there
    # shellcheck source=tools/install_cuda.sh
    source "$ROOT/tools/install_cuda.sh"  # CUDA_HOME, CUDA_VERSION, TORCH_CUDA_ARCH_LIST, CUDA_BUILD_ENV
    say "compiling mmcv's ops for CUDA $CUDA_VERSION, architectures $TORCH_CUDA_ARCH_LIST, $std"
else
    say "compiling mmcv's ops for the CPU, $std"
fi
(cd "$src" && env MMCV_WITH_OPS=1 MAX_JOBS="${MAX_JOBS:-$(nproc)}" CFLAGS='-g0 -O2' CXXFLAGS='-g0 -O2' \
    "${CUDA_BUILD_ENV[@]}" "$PY" -m pip wheel -q --no-index --no-build-isolation --no-deps -w "$tmp/dist" . \
    >"$tmp/build.log" 2>&1) || { tail -n 40 "$tmp/build.log" >&2; echo "mmcv build failed (above)" >&2; exit 1; }
pip_install --force-reinstall "$tmp"/dist/mmcv-*.whl  # over an mmcv of the same version without these ops
# nms on the GPU says that the kernels are there (a get_compiling_cuda_version() check segfaulted here once: env_check.py)
"$PY" -c 'import torch, mmcv, mmcv.ops
on = "cuda" if torch.cuda.is_available() else "cpu"
mmcv.ops.nms(torch.tensor([[0., 0., 9., 9.]], device=on), torch.tensor([1.], device=on), 0.5)
print("mmcv", mmcv.__version__, "ops run on", torch.cuda.get_device_name(0) if on == "cuda" else "the CPU")'
say done
