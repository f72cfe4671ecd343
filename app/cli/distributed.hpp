#pragma once
// The solve over MPI ranks (mpirun, srun): row blocks handed out on demand,
// each rank reading only its blocks and writing its rows into the outputs
// (NPY) or sending them to rank 0 (GeoTIFF). Without MPI in the build, or
// without a launcher, nothing of this runs.

#include "solve.hpp"

namespace cubesolve::cli::mpi {

/// Whether this process was started by an MPI launcher.
bool launched();

/// MPI for the process's lifetime when launched(); nothing otherwise.
class Session {
public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

private:
  bool started_ = false;
};

/// This process's rank (0 without MPI).
int rank();

/// The solve on every rank; returns the run's exit code on every rank, and
/// only rank 0 prints (the report, or the one line of a failure).
int solve(const SolveRequest& request);

}  // namespace cubesolve::cli::mpi
