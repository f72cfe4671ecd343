#pragma once
// The options both front ends share, by the CLI's names and rules: how a
// solve runs and how its inputs are read. The desktop application takes
// them on its command line with the same words and the same messages.

#include "args.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <set>
#include <string>

namespace cubesolve::cli {

/// --rcond, --min-valid, --ridge, --threads, --dtype, --memory, --method.
SolveOptions solve_options(const Args& args);
/// How the inputs are read: --nodata V; for MintPy stacks --ref-yx Y,X,
/// --no-ref, --keep-zero, --mask-dataset, --mask-threshold, --weight-func,
/// --looks. Throws InputError for a stack option on a cube that is no stack.
InputOptions input_options(const Args& args, bool stack);
/// The flags and options input_options reads.
extern const std::set<std::string> kInputFlags, kInputOptions;
/// `names` with the input flags (or options) added.
std::set<std::string> with_inputs(std::set<std::string> names, const std::set<std::string>& inputs);

/// The peak resident memory of this program in MB.
double peak_memory_mb();

}  // namespace cubesolve::cli
