# Sourced by tools/install.sh when mmcv's ops are built for CUDA: finds the toolkit and the GPU architectures.
# In: PY (the environment's python, torch installed), pip_install, say. Out: CUDA_HOME, CUDA_VERSION (e.g. 13.0),
# TORCH_CUDA_ARCH_LIST (e.g. '9.0+PTX') and CUDA_BUILD_ENV (the variables mmcv's build runs with).
#
# nvcc must have torch's CUDA major version (torch refuses to build extensions otherwise). Tried in order: CUDA_HOME,
# the nvcc on the PATH, /usr/local/cuda, then the registry's nvcc packages of torch's CUDA version, installed into
# the environment (nvidia-cuda-nvcc, -crt, -cccl and nvidia-nvvm: CUDA 13 ships them as one nvidia/cu13 tree).

TORCH_CUDA="$("$PY" -c 'import torch; print(torch.version.cuda or "")')"
if [[ -z "$TORCH_CUDA" ]]; then
    echo "CUDA ops asked for (VITBENCH_CUDA=1 or a visible GPU) but torch" \
         "$("$PY" -c 'import torch; print(torch.__version__)') is a CPU-only build; install a CUDA build of torch," \
         "or set VITBENCH_CUDA=0" >&2
    exit 1
fi

# The toolkit folder an nvcc belongs to (nvcc may be a wrapper script: ask nvcc itself), and its version.
nvcc_home() {
    "$1" --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -n1 | xargs -r realpath
}
nvcc_version() { "$1" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9.]*\),.*/\1/p'; }

CUDA_HOME_FOUND=
for nvcc in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
    [[ -n "$nvcc" && -x "$nvcc" ]] || continue
    version="$(nvcc_version "$nvcc")"
    if [[ "${version%%.*}" == "${TORCH_CUDA%%.*}" ]]; then
        CUDA_HOME_FOUND="$(nvcc_home "$nvcc")"
        CUDA_VERSION="$version"
        break
    fi
    say "skipping $nvcc: CUDA ${version:-?}, torch is built for CUDA $TORCH_CUDA"
done
if [[ -z "$CUDA_HOME_FOUND" ]]; then
    SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    major="${TORCH_CUDA%%.*}"
    if (( major < 13 )); then  # CUDA 12 wheels are split by component with -cu12 names: not assembled here
        echo "no nvcc of CUDA $major found (CUDA_HOME, PATH, /usr/local/cuda): install the CUDA $TORCH_CUDA toolkit" \
             "and set CUDA_HOME" >&2
        exit 1
    fi
    say "no nvcc of CUDA $major here: installing the registry's nvidia-cuda-nvcc $TORCH_CUDA into $VENV"
    pip_install "nvidia-cuda-nvcc==$TORCH_CUDA.*" "nvidia-cuda-crt==$TORCH_CUDA.*" "nvidia-nvvm==$TORCH_CUDA.*" \
        "nvidia-cuda-cccl==$TORCH_CUDA.*" "nvidia-cuda-runtime==$TORCH_CUDA.*"
    CUDA_HOME_FOUND="$SITE/nvidia/cu$major"
    CUDA_VERSION="$(nvcc_version "$CUDA_HOME_FOUND/bin/nvcc")"
fi
CUDA_HOME="$CUDA_HOME_FOUND"

# The architectures: the variable, else the visible GPUs' (capped at torch's newest, '+PTX' on the last, as torch
# does), else every one torch is built for, so that the wheel runs on whatever GPU this torch runs on.
if [[ -z "${TORCH_CUDA_ARCH_LIST-}" ]]; then
    TORCH_CUDA_ARCH_LIST="$("$PY" - <<'PY'
import torch
built = sorted({(int(a[3:-1]), int(a[-1])) for a in torch.cuda.get_arch_list() if a.startswith('sm_')})
seen = sorted({min(torch.cuda.get_device_capability(i), built[-1]) for i in range(torch.cuda.device_count())})
arches = [f'{a}.{b}' for a, b in (seen or built)]
print(';'.join(arches[:-1] + [arches[-1] + '+PTX']))
PY
)"
fi

# Headers nvcc needs beyond the toolkit's own (cuBLAS, cuSPARSE, cuSOLVER ... come with torch's nvidia wheels), and
# unversioned names of the runtime for the linker where the toolkit is a registry tree (libcudart.so.13 only).
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
CUDA_INCLUDES="$(find "$SITE/nvidia" -mindepth 2 -maxdepth 2 -name include -type d 2>/dev/null | sort | paste -sd:)"
CUDA_LINKS="$VENV/.cuda-links"
mkdir -p "$CUDA_LINKS"
for lib in "$CUDA_HOME"/lib/libcudart.so.* "$CUDA_HOME"/lib64/libcudart.so.*; do
    [[ -e "$lib" ]] && ln -sf "$lib" "$CUDA_LINKS/libcudart.so"
done
CUDA_BUILD_ENV=(FORCE_CUDA=1 "CUDA_HOME=$CUDA_HOME" "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
                "MMCV_CUDA_ARGS=-Xcompiler=-g0,-O2" "CPATH=${CUDA_INCLUDES}${CPATH:+:$CPATH}"
                "LIBRARY_PATH=$CUDA_LINKS${LIBRARY_PATH:+:$LIBRARY_PATH}" "PATH=$CUDA_HOME/bin:$PATH")
