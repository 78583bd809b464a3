#!/usr/bin/env bash
# One-command, idempotent install of vitbench and its locked OpenMMLab stack into .venv/ (or the environment
# VITBENCH_VENV names: a virtualenv or conda environment of its own, created as a virtualenv when it does not exist).
# Every package at its version in requirements.lock (pip constraints); pyproject.toml declares the ranges.
#
# Slow only the first time on a machine: mmcv 2.1.0 exists on the registry only as an sdist and must be
# compiled with its ops (~7.5 min on 2 cores for the CPU). The built wheel is cached outside the repository, so
# fresh clones on the same machine reuse it. A stamp in .venv records what was installed; when it matches and the
# stack imports, the script returns in a second or two.
#
# mmcv's ops get CUDA kernels when a GPU is visible, or with VITBENCH_CUDA=1 (VITBENCH_CUDA=0: CPU only): nvcc
# from CUDA_HOME, the PATH or /usr/local/cuda when its major version is torch's, else the registry's
# nvidia-cuda-nvcc of that version; TORCH_CUDA_ARCH_LIST from the variable, else the visible GPUs, else every
# architecture torch itself is built for. The wheel cache is keyed by mmcv, torch, CUDA (or cpu), the arch list
# and Python, so a CPU wheel is never taken for a CUDA one, nor the reverse.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VITBENCH_VENV:-$ROOT/.venv}"
WHEELS="${VITBENCH_WHEEL_CACHE:-$HOME/.cache/vitbench/wheels}"
PY="$VENV/bin/python"

# Pins come from the lock file, e.g. pin torch -> torch==2.14.1; every pip install below is held to it (-c).
LOCK="$ROOT/requirements.lock"
pin() { grep -iE "^$1==" "$LOCK" || { echo "$1: no version in requirements.lock" >&2; exit 1; }; }
MMCV_VERSION="$(pin mmcv | cut -d= -f3)"

say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }
# pip, minus the warnings this machine's pip config prints for local index folders it does not have.
pip_install() {
    "$PY" -m pip install -q --progress-bar off "$@" 2> >(grep -v "^WARNING: Location '.*' is ignored" >&2)
}

# CUDA ops for mmcv: VITBENCH_CUDA=1 / 0, or when a GPU is visible (CUDA_VISIBLE_DEVICES='' or -1 hides them).
gpu_visible() {
    [[ "${CUDA_VISIBLE_DEVICES-all}" != "" && "${CUDA_VISIBLE_DEVICES-all}" != "-1" ]] || return 1
    nvidia-smi -L 2>/dev/null | grep -q '^GPU' || compgen -G '/dev/nvidia[0-9]*' >/dev/null
}
case "${VITBENCH_CUDA-}" in
    1) CUDA_OPS=1 ;;
    0) CUDA_OPS=0 ;;
    '') if gpu_visible; then CUDA_OPS=1; else CUDA_OPS=0; fi ;;
    *) echo "VITBENCH_CUDA is '$VITBENCH_CUDA', expected 1 (build mmcv's CUDA ops), 0 (CPU only) or unset" \
            "(CUDA ops when a GPU is visible)" >&2; exit 2 ;;
esac

# The stamp covers everything that decides what gets installed.
stamp_value() {
    { cat "$ROOT/pyproject.toml" "$LOCK" "$ROOT/tools/install.sh" "$ROOT/tools/install_cuda.sh"
      echo "cuda=$CUDA_OPS arch=${TORCH_CUDA_ARCH_LIST-}"; } \
        | sha256sum | cut -d' ' -f1
}
STAMP="$VENV/.vitbench-install-stamp"

stack_imports() {
    "$PY" - <<'PY' >/dev/null 2>&1
import torch, torchvision, mmengine, mmcv.ops, mmseg, mmdet, timm, pycocotools, backbones, pretrain, downstream
PY
}

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$(stamp_value)" ]] && stack_imports; then
    say "up to date ($VENV)"
    exit 0
fi

if [[ ! -x "$PY" ]]; then
    say "creating virtual environment $VENV"
    python3 -m venv "$VENV"
fi
pip_install --upgrade pip "setuptools<80" wheel

# What compiling mmcv needs first. The CUDA build of torch runs on CPU; the CPU-only 2.13 wheel has no
# matching torchvision (DESIGN.md).
say "installing $(pin torch) $(pin torchvision) (CUDA build, ~5 GB, runs on CPU) and $(pin mmengine)"
pip_install -c "$LOCK" "$(pin torch)" "$(pin torchvision)" "$(pin mmengine)" ninja

# What the wheel is built for, and the cache folder of exactly that build.
TORCH_VERSION="$("$PY" -c 'import torch; print(torch.__version__)')"
PY_VERSION="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
CUDA_BUILD_ENV=()
if (( CUDA_OPS )); then
    # shellcheck source=tools/install_cuda.sh
    source "$ROOT/tools/install_cuda.sh"  # CUDA_HOME, CUDA_VERSION, TORCH_CUDA_ARCH_LIST, CUDA_BUILD_ENV
    BUILD="cuda$CUDA_VERSION-arch${TORCH_CUDA_ARCH_LIST//;/_}"
    say "mmcv's ops for CUDA $CUDA_VERSION ($CUDA_HOME), architectures $TORCH_CUDA_ARCH_LIST"
else
    BUILD=cpu
fi
WHEEL_DIR="$WHEELS/mmcv$MMCV_VERSION-torch$TORCH_VERSION-py$PY_VERSION-$BUILD"

# Installed mmcv is kept when its ops run: on the CPU, and for a CUDA build compiled by this CUDA version (run on
# the GPU when one is visible: a kernel missing for its architecture fails there).
mmcv_ops_work() {
    "$PY" - "$MMCV_VERSION" "$CUDA_OPS" "${CUDA_VERSION-}" <<'PY' >/dev/null 2>&1
import sys, torch, mmcv
from mmcv.ops import get_compiling_cuda_version, nms
assert mmcv.__version__ == sys.argv[1]
boxes, scores = torch.tensor([[0., 0., 1., 1.]]), torch.tensor([1.])
nms(boxes, scores, 0.5)
if sys.argv[2] == '1':
    assert get_compiling_cuda_version() == sys.argv[3]
    if torch.cuda.is_available():
        nms(boxes.cuda(), scores.cuda(), 0.5)
PY
}

build_mmcv_wheel() {
    local tmp; tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' RETURN
    say "downloading the mmcv $MMCV_VERSION sdist"
    "$PY" -m pip download -q --no-deps --no-binary :all: --no-build-isolation "mmcv==$MMCV_VERSION" -d "$tmp"
    tar -xzf "$tmp"/mmcv-"$MMCV_VERSION".tar.gz -C "$tmp"
    local src="$tmp/mmcv-$MMCV_VERSION"
    # torch 2.14's headers need C++20; mmcv 2.1.0 hard-codes older standards.
    sed -i -E 's/-std=c\+\+1[47]/-std=c++20/g' "$src/setup.py"
    if (( CUDA_OPS )); then
        say "compiling mmcv $MMCV_VERSION with its CUDA ops (~35 min on 2 cores for one architecture, more for" \
            "more; cached in $WHEEL_DIR)"
    else
        say "compiling mmcv $MMCV_VERSION with its ops (takes ~8 min on 2 cores; cached in $WHEEL_DIR)"
    fi
    mkdir -p "$WHEEL_DIR"
    # CUDA_BUILD_ENV (install_cuda.sh): FORCE_CUDA=1, CUDA_HOME, TORCH_CUDA_ARCH_LIST, nvcc's host flags, headers
    if ! (cd "$src" && env MMCV_WITH_OPS=1 MAX_JOBS="${MAX_JOBS:-$(nproc)}" CFLAGS='-g0 -O2' CXXFLAGS='-g0 -O2' \
            "${CUDA_BUILD_ENV[@]}" "$PY" -m pip wheel --no-build-isolation --no-deps -w "$tmp/dist" . \
            >"$tmp/build.log" 2>&1); then
        tail -n 60 "$tmp/build.log" >&2
        echo "mmcv build failed (last lines above); see docs/getting-started.md, 'Troubleshooting the mmcv build'" >&2
        return 1
    fi
    # Move into the cache only once complete, so an interrupted build never leaves a broken wheel there.
    local built; built="$(ls "$tmp"/dist/mmcv-*.whl)"
    mv "$built" "$WHEEL_DIR/$(basename "$built").part"
    mv "$WHEEL_DIR/$(basename "$built").part" "$WHEEL_DIR/$(basename "$built")"
}

if mmcv_ops_work; then
    say "mmcv $MMCV_VERSION with ops already works"
else
    cached="$(ls "$WHEEL_DIR"/mmcv-"$MMCV_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
    if [[ -z "$cached" ]]; then
        build_mmcv_wheel
        cached="$(ls "$WHEEL_DIR"/mmcv-"$MMCV_VERSION"-*.whl | head -n1)"
    else
        say "using cached wheel $cached"
    fi
    pip_install --no-deps --force-reinstall "$cached"
    mmcv_ops_work || { echo "mmcv $MMCV_VERSION installed but mmcv.ops does not run; see docs/getting-started.md, 'Troubleshooting the mmcv build'" >&2; exit 1; }
fi

# the experiment trackers too (--vis-backend; their tests run in make test): ~15 s more the first time
say "installing mmsegmentation, mmdet, timm, the trackers, the rest of requirements.lock and vitbench (editable)"
pip_install -c "$LOCK" -e "$ROOT[test,tracking]"

stack_imports || { echo "install finished but the stack does not import; run: $PY tools/env_check.py" >&2; exit 1; }
stamp_value > "$STAMP"
say "done ($VENV)"
