// cubesolve-cli: the headless front end. Every error ends here and becomes
// one line on stderr and an exit code: 2 bad arguments or input, 3 I/O,
// 4 numerical or device failure, 128 + the signal when interrupted (130 for Ctrl-C).
#include "commands.hpp"
#include "common.hpp"
#include "distributed.hpp"

#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>

#include <csignal>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstdio>
#include <iostream>
#include <new>

namespace {

const char* kUsage = R"(cubesolve-cli: per-pixel minimum-norm least squares on data cubes with gaps

usage:
  cubesolve-cli solve CUBE DESIGN -o X.npy [--weights W.npy] [--device auto|cpu|cuda]
                [--rcond R] [--min-valid K] [--ridge L] [--diag PREFIX] [--threads T]
                [--dtype float32|float64] [--model F.npy] [--residual F.npy]
                [--method auto|exact] [--memory MB] [--pairs FILE] [--times FILE]
                [--device-precision mixed|float64] [--device-memory MB] [--nodata V]
                [MintPy stacks: --ref-yx Y,X | --no-ref] [--ref-radius R] [--keep-zero]
                [--mask-dataset connectComponent|coherence] [--mask-threshold T]
                [--weight-func var|fim|coh|no] [--looks L] [--formulation phase|velocity]
                [--unit m|cm|mm|radian] [--ref-date YYYYMMDD] [--stderr] [--cov]
                [--loss l2|l1|huber[:D]] [--tol T] [--max-iter K] [--json]
  cubesolve-cli info CUBE [DESIGN] [--weights W.npy] [--min-valid K] [--pairs F] [--times F] [--json]
  cubesolve-cli demo [-o DIR] [--size S] [--name insar|seed] [--threads T] [--json]
  cubesolve-cli verify CUBE DESIGN X.npy [--sample K] [--weights W.npy] [--rcond R]
                [--min-valid K] [--ridge L] [--threads T] [--pairs F] [--times F] [--json]
  cubesolve-cli bench [--size S] [--n N] [--m M] [--nan F] [--masks random|blobs]
                [--design gaussian|sbas]
                [--threads T] [--sample K] [--repeat R] [--device cpu|cuda|auto]
                [--device-precision mixed|float64] [--device-memory MB]
                [--weights none|random|coherence] [--loss l1|huber[:D]] [--scaling] [--json]
  cubesolve-cli bench --tune [--tune-seconds S] [--threads T] [--json]

CUBE: (N, H, W) .npy, float32 or float64, or any raster GDAL opens (bands =
observations; nodata is missing); NaN and Inf are missing values.
DESIGN: (N, M) .npy or .csv, or built: sbas (pairs from a MintPy ifgramStack.h5
cube or --pairs FILE of YYYYMMDD_YYYYMMDD lines; dates - 1 unknowns, the first
date the reference), poly:D or harmonic:K[:P] (times from --times FILE, one per
band, numbers or YYYYMMDD; else band index). X: (M, H, W) as .npy, or GeoTIFF
(.tif) with the cube's georeference, or for a MintPy stack timeseries.h5 (any
name ending in .h5) in MintPy's layout with temporalCoherence.h5 and
numInvIfgram.h5 beside it. A MintPy stack is read as MintPy's inversion reads
it: referenced at REF_Y/REF_X (or refPhase) where not 0, and 0 as missing.
--stderr adds PREFIX_stderr (M, H, W) to --diag's files: each unknown's standard
error on the pixel's own valid rows, sqrt(diag(s2 (A_V' W A_V)^+)), s2 =
rss / (n_valid - rank); NaN where n_valid <= rank. --cov adds PREFIX_cov
(M(M+1)/2, H, W): the whole matrix s2 (A_V' W A_V)^+, its upper triangle row by
row (C00, C01, ..., C11, ...).
--loss l1 (least absolute deviations, exact) or huber[:D] (D: Huber's delta in
the weighted residuals' unit; default each pixel's 1.345 x 1.4826 x MAD of its
least-squares residuals) fits each pixel robustly on its own valid rows; with
--diag, PREFIX_iterations and PREFIX_objective. Huber stops where a duality gap
proves the objective within --tol of its minimum (default 1e-6); a pixel still
iterating after --max-iter steps (default 500) is NaN, status not-converged.
info and verify take the same input options as solve. solve reads, solves and writes in row
blocks that keep the data within --memory MB (default 256). On a CUDA device
the small systems are solved in float32 and refined once against float64
residuals (--device-precision mixed, the default) or in float64 throughout;
the work goes to the device in pieces that fit its free memory (or
--device-memory MB), and pixels it cannot take are solved on the CPU.
Exit codes: 0 ok, 2 bad input, 3 I/O failure, 4 numerical or device failure,
128 + the signal when interrupted (130 Ctrl-C, 143 SIGTERM); nothing is written then.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace cubesolve;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
#ifdef __GLIBC__
  // Blocks of rows come from and go back to the system: glibc's moving
  // threshold would keep the freed blocks of a streamed solve (read on
  // another thread, freed on this one) in the heap, above --memory.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  const cli::mpi::Session mpi(&argc, &argv);  // under an MPI launcher; nothing otherwise
  const std::string command = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);
  try {
    if (command == "--help" || command == "-h" || command == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (command == "--version") {
      std::printf("cubesolve-cli %s\n", version());
      for (const auto& d : describe_devices()) std::printf("  %s\n", d.c_str());
      return 0;
    }
    if (command == "solve") return cli::cmd_solve(rest);
    if (command == "info") return cli::cmd_info(rest);
    if (command == "demo") return cli::cmd_demo(rest);
    if (command == "verify") return cli::cmd_verify(rest);
    if (command == "bench") return cli::cmd_bench(rest);
    throw InputError("expected a command (solve, info, demo, verify, bench), found '" + command + "'; see --help");
  } catch (...) {
    const cli::Failure f = cli::failure_of(std::current_exception());
    if (cli::mpi::rank() == 0) std::cerr << "cubesolve-cli: " << f.message << "\n";  // one line for the whole run
    return f.code;
  }
}
