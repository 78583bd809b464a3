#!/usr/bin/env bash
# One-command, idempotent install of vitbench and its pinned OpenMMLab stack into .venv/.
#
# Slow only the first time on a machine: mmcv 2.1.0 exists on the registry only as an sdist and must be
# compiled with its ops (~7.5 min on 2 cores). The built wheel is cached outside the repository, so fresh
# clones on the same machine reuse it. A stamp in .venv records what was installed; when it matches and the
# stack imports, the script returns in a second or two.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VITBENCH_VENV:-$ROOT/.venv}"
WHEELS="${VITBENCH_WHEEL_CACHE:-$HOME/.cache/vitbench/wheels}"
PY="$VENV/bin/python"

# Pins come from pyproject.toml, e.g. pin torch -> torch==2.14.1.
pin() { grep -oE "\"$1==[^\"]+\"" "$ROOT/pyproject.toml" | tr -d '"'; }
MMCV_VERSION="$(pin mmcv | cut -d= -f3)"

say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }
# pip, minus the warnings this machine's pip config prints for local index folders it does not have.
pip_install() {
    "$PY" -m pip install -q --progress-bar off "$@" 2> >(grep -v "^WARNING: Location '.*' is ignored" >&2)
}

# The stamp covers everything that decides what gets installed.
stamp_value() { cat "$ROOT/pyproject.toml" "$ROOT/tools/install.sh" | sha256sum | cut -d' ' -f1; }
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
pip_install "$(pin torch)" "$(pin torchvision)" "$(pin mmengine)" ninja

mmcv_ops_work() {
    "$PY" - "$MMCV_VERSION" <<'PY' >/dev/null 2>&1
import sys, torch, mmcv
from mmcv.ops import nms
assert mmcv.__version__ == sys.argv[1]
nms(torch.tensor([[0., 0., 1., 1.]]), torch.tensor([1.]), 0.5)
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
    say "compiling mmcv $MMCV_VERSION with its ops (takes ~8 min on 2 cores; cached in $WHEELS)"
    mkdir -p "$WHEELS"
    if ! (cd "$src" && MMCV_WITH_OPS=1 MAX_JOBS="${MAX_JOBS:-$(nproc)}" CFLAGS='-g0 -O2' CXXFLAGS='-g0 -O2' \
            "$PY" -m pip wheel --no-build-isolation --no-deps -w "$tmp/dist" . >"$tmp/build.log" 2>&1); then
        tail -n 60 "$tmp/build.log" >&2
        echo "mmcv build failed (last lines above); see README, 'Troubleshooting the mmcv build'" >&2
        return 1
    fi
    # Move into the cache only once complete, so an interrupted build never leaves a broken wheel there.
    local built; built="$(ls "$tmp"/dist/mmcv-*.whl)"
    mv "$built" "$WHEELS/$(basename "$built").part"
    mv "$WHEELS/$(basename "$built").part" "$WHEELS/$(basename "$built")"
}

if mmcv_ops_work; then
    say "mmcv $MMCV_VERSION with ops already works"
else
    cached="$(ls "$WHEELS"/mmcv-"$MMCV_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
    if [[ -z "$cached" ]]; then
        build_mmcv_wheel
        cached="$(ls "$WHEELS"/mmcv-"$MMCV_VERSION"-*.whl | head -n1)"
    else
        say "using cached wheel $cached"
    fi
    pip_install --no-deps --force-reinstall "$cached"
    mmcv_ops_work || { echo "mmcv $MMCV_VERSION installed but mmcv.ops does not run; see README troubleshooting" >&2; exit 1; }
fi

say "installing mmsegmentation, mmdet, timm, the rest of pyproject.toml and vitbench (editable)"
pip_install -e "$ROOT[test]"

stack_imports || { echo "install finished but the stack does not import; run: $PY tools/env_check.py" >&2; exit 1; }
stamp_value > "$STAMP"
say "done ($VENV)"
