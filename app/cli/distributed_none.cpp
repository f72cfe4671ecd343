// Built without MPI: a launcher's environment changes nothing.
#include "distributed.hpp"

#include <cubesolve/error.hpp>

namespace cubesolve::cli::mpi {

bool launched() { return false; }
Session::Session(int*, char***) {}
Session::~Session() = default;
int rank() { return 0; }
int solve(const SolveRequest&) { throw InputError("this build of cubesolve-cli has no MPI (configure with CUBESOLVE_MPI=ON)"); }

}  // namespace cubesolve::cli::mpi
