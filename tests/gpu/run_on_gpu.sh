#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and the CUDA toolkit, but no Qt, VTK or
# GDAL: builds the core and the CLI with CUDA, checks the device's answers
# against per-pixel gelsd (both precisions, and in small pieces), then prints
# the bench figures. The checks and figures take about 100 s on an H200.
#
#   tests/gpu/run_on_gpu.sh [DEPS]
#
# DEPS (optional): a folder of Debian .deb files for BLAS/LAPACK (libopenblas*,
# liblapack*, libblas3, libgfortran5) for machines that have none; they are
# unpacked into DEPS/root, not into /.
#
# BUILD=DIR (optional): use a build made elsewhere with CUDA on (DIR/app/
# cubesolve-cli, and DIR/tests/tst_cuda when it was built with tests, whose
# device cases then run first) instead of building here; the libraries it
# needs must be on LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEPS=${1:-}
EXTRA=()
if [ -n "$DEPS" ] && ls "$DEPS"/*.deb >/dev/null 2>&1; then
  mkdir -p "$DEPS/root"
  for f in "$DEPS"/*.deb; do dpkg -x "$f" "$DEPS/root"; done
  LIB="$DEPS/root/usr/lib/x86_64-linux-gnu"
  BLAS=$(ls "$LIB"/openblas-pthread/libopenblas.so* 2>/dev/null | head -1 || true)
  [ -n "$BLAS" ] || BLAS=$(ls "$LIB"/libopenblas.so* "$LIB"/blas/libblas.so* 2>/dev/null | head -1)
  LAPACK=$(ls "$LIB"/openblas-pthread/liblapack.so* "$LIB"/lapack/liblapack.so* 2>/dev/null | head -1 || true)
  EXTRA=(-DBLAS_LIBRARIES="$BLAS" -DLAPACK_LIBRARIES="${LAPACK:-$BLAS}")
  export LD_LIBRARY_PATH="$LIB:$LIB/openblas-pthread:$LIB/blas:$LIB/lapack:${LD_LIBRARY_PATH:-}"
fi
if [ -z "${BUILD:-}" ]; then
  BUILD=build-gpu
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCUBESOLVE_GUI=OFF -DCUBESOLVE_GDAL=OFF \
    -DCUBESOLVE_TESTS=OFF -DCUBESOLVE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${EXTRA[@]}"
  cmake --build "$BUILD" -j "$(nproc)"
fi
CLI=$BUILD/app/cubesolve-cli
"$CLI" --version
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv || true

# A failed check fails the run at the end; the checks after it still run.
failed=0
fail() {
  echo "run_on_gpu: FAILED: $*"
  failed=1
}

# The CUDA tests' device cases (they skip without a device, so a skip here fails).
if [ -x "$BUILD/tests/tst_cuda" ]; then
  LOG=$(mktemp)
  "$BUILD/tests/tst_cuda" >"$LOG" 2>&1 || fail "tst_cuda"
  cat "$LOG"
  grep -q '^SKIP.*\(deviceMatchesGelsd\|insarDemoOnTheDevice\)' "$LOG" && fail "the device tests skipped"
fi

# Correctness: solved on the device, compared with per-pixel gelsd. A solve
# fails here when the device solved no pixel or the CLI warned (a failed
# self-check, a fallback to the CPU): its answers would then be the CPU's.
OUT=$(mktemp -d)
"$CLI" demo -o "$OUT" --size 300 --json >/dev/null
device_solve() {  # NAME OUTPUT [OPTIONS...]
  local name=$1 x=$2
  shift 2
  "$CLI" solve "$OUT/${name}_cube.npy" "$OUT/${name}_design.npy" -o "$x" --device cuda --dtype float64 --json "$@" \
    >"$OUT/solve.json" 2>"$OUT/solve.err" || {
    cat "$OUT/solve.err"
    fail "solve $name $*"
    return
  }
  cat "$OUT/solve.json" "$OUT/solve.err"
  if grep -q '"device_pixels": *0[,}]' "$OUT/solve.json" || grep -q warning "$OUT/solve.err"; then
    fail "the device did not solve $name as it should"
  fi
  "$CLI" verify "$OUT/${name}_cube.npy" "$OUT/${name}_design.npy" "$x" --sample 3000 || fail "verify $name $*"
}
for name in insar seed; do
  for precision in mixed float64; do
    echo "== $name, --device-precision $precision"
    device_solve "$name" "$OUT/${name}_$precision.npy" --device-precision "$precision" --diag "$OUT/${name}_$precision"
  done
  echo "== $name, in pieces of at most 64 MB of device memory"
  device_solve "$name" "$OUT/${name}_small.npy" --device-memory 64
done

# Figures: the seed shape (both precisions), a large InSAR-like stack, and a
# weighted solve (the Gram path).
bench() {
  echo "== bench $*"
  "$CLI" bench --device cuda "$@" || fail "bench $*"
}
bench --sample 300
bench --device-precision float64 --sample 300
bench --n 100 --m 50 --sample 300
bench --n 1231 --m 270 --size 632 --nan 0.1 --masks blobs --sample 50 --repeat 3 --memory 8192
bench --n 1231 --m 270 --size 632 --nan 0.1 --masks random --sample 50 --repeat 3 --memory 8192
bench --n 100 --m 50 --weights coherence --sample 300
[ "$failed" = 0 ] || exit 1
echo "run_on_gpu: done"
