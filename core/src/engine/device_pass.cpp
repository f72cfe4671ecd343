#include "engine/device_pass.hpp"

#include <cubesolve/engine/check.hpp>
#include <cubesolve/error.hpp>

#include "cuda/backend.hpp"
#include "engine/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace cubesolve::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Pixels of a device solve checked against gelsd afterwards (at most).
constexpr std::size_t kDeviceChecks = 8;

/// The device's names for the paths it takes (everything else: kSkip).
constexpr std::pair<Kind, std::uint8_t> kDeviceKinds[] = {{Kind::Full, gpu::kFull},
                                                           {Kind::Deletion, gpu::kDeletion},
                                                           {Kind::DualSchur, gpu::kDual},
                                                           {Kind::DualGather, gpu::kGather},
                                                           {Kind::Gram, gpu::kGram}};

std::uint8_t device_kind(Kind k) {
  for (const auto& [kind, device] : kDeviceKinds)
    if (kind == k) return device;
  return gpu::kSkip;
}

Kind host_kind(std::uint8_t d) {
  for (const auto& [kind, device] : kDeviceKinds)
    if (device == d) return kind;
  return Kind::Skip;
}

/// Pixels [begin, begin + B) on the device; those it solved are written and
/// marked in job.taken.
void solve_chunk_on_device(Job& job, Workspace& ws, std::size_t begin, std::size_t B) {
  const std::size_t M = job.M;
  ws.nv.assign(B, 0);
  ws.gpu_kind.assign(B, gpu::kSkip);
  ws.rss.assign(B, kNaN);
  std::vector<std::uint8_t>& done = ws.gpu_done;
  done.assign(B, 0);
  gpu::Chunk in;
  in.cube = job.cube.raw();
  in.float32 = job.cube.dtype() == DType::Float32;
  in.stride = job.P;
  in.begin = begin;
  in.count = B;
  in.rss = job.options.residuals;
  if (job.weights) {
    in.weights = job.weights->raw();
    in.weights_float32 = job.weights->dtype() == DType::Float32;
  }
  gpu::ChunkResult out;
  out.x_float32 = job.r.x.dtype() == DType::Float32;
  out.x = static_cast<char*>(job.r.x.raw()) + begin * (out.x_float32 ? sizeof(float) : sizeof(double));
  out.x_stride = job.P;
  out.nv = ws.nv.data();
  out.kind = ws.gpu_kind.data();
  out.done = done.data();
  out.rss = ws.rss.data();
  try {
    job.gpu->solve(in, out);
  } catch (const gpu::OutOfMemory&) {
    job.gpu_short += B;  // the CPU does the chunk
    return;
  }
  for (std::size_t k = 0; k < B; ++k) {
    if (!done[k]) continue;
    job.taken[begin + k] = 1;
    const Kind kind = host_kind(ws.gpu_kind[k]);
    const std::size_t rank = fast_rank(kind, static_cast<std::size_t>(ws.nv[k]), job.f, job.options.ridge > 0);
    job.write_diagnostics(begin + k, rank_status(rank, M), static_cast<int>(rank), kNaN, ws.rss[k], ws.nv[k]);
    ++ws.paths[static_cast<std::size_t>(path_of(kind))];
    ++ws.device_pixels;
    if (ws.gpu_sample.size() < kDeviceChecks && kind != Kind::Full) ws.gpu_sample.push_back(begin + k);
  }
}

}  // namespace

std::unique_ptr<gpu::Solver> make_device_solver(Job& job) {
  const Planner& planner = job.planner;
  if (!planner.fast_ok || planner.exact_only) return nullptr;
  if (planner.custom_rcond) {  // the device does not check each pixel's condition
    job.r.warnings.push_back("an explicit rcond is solved on the CPU");
    return nullptr;
  }
  try {
    std::vector<std::uint8_t> table(job.N + 1);  // the planner's choice by valid count, for the device
    // Weighted solves send the device their Gram pixels only (the host solves
    // the underdetermined ones, exact fits that the weights do not change),
    // and so do ridge solves (the host takes the ridge's dual form).
    const bool gram_only = job.weights || job.options.ridge > 0;
    for (std::size_t nv = 0; nv <= job.N; ++nv)
      table[nv] = gram_only && job.kinds[nv] != Kind::Gram ? std::uint8_t{gpu::kSkip} : device_kind(job.kinds[nv]);
    gpu::Settings settings;
    settings.tau = kSmallTau;
    settings.gram_tau = kGramTau;
    settings.gram_step = kGramStep;
    settings.gather_step = kGatherStep;
    settings.growth = kMaxGrowth;
    settings.ridge = job.options.ridge;
    settings.float32 = !job.options.device_float64;
    settings.memory = job.options.device_memory;
    return std::make_unique<gpu::Solver>(job.design, std::move(table), settings);
  } catch (const gpu::OutOfMemory& e) {
    job.r.warnings.push_back(std::string("the CUDA device has too little free memory (") + e.what() +
                             "); solved on the CPU");
  } catch (const NumericalError& e) {
    job.r.warnings.push_back(std::string("the CUDA device could not be set up (") + e.what() + "); solved on the CPU");
  }
  return nullptr;
}

void device_pass(Job& job, std::vector<Workspace>& ws, const Progress& progress) {
  // Few, large chunks: each is one call with its transfers (the host keeps
  // only X's rows and a few flags a pixel); a few threads keep the device's
  // two lanes busy.
  const std::size_t feeders = std::min<std::size_t>(static_cast<std::size_t>(job.r.threads), 4);
  const std::size_t chunk = std::clamp<std::size_t>(
      std::min(job.options.memory / feeders / (8 * job.M + 32), (job.P + feeders - 1) / feeders), 64,
      std::size_t{1} << 16);
  job.taken.assign(job.P, 0);
  parallel_for(
      job.P, chunk, static_cast<int>(feeders),
      [&](int t, std::size_t b, std::size_t e) { solve_chunk_on_device(job, ws[static_cast<std::size_t>(t)], b, e - b); },
      progress);
}

void device_warnings(const Job& job, std::vector<std::string>& warnings) {
  if (job.gpu->shrinks() > 0)
    warnings.push_back("the CUDA device ran short of memory; its work was cut into pieces of " +
                       std::to_string(job.gpu->piece_limit()) + " pixels");
  if (job.gpu_short > 0)
    warnings.push_back("the CUDA device had no memory left for " + std::to_string(job.gpu_short.load()) +
                       " pixels; they were solved on the CPU");
}

bool device_results_hold(const Job& job, const std::vector<Workspace>& ws) {
  const SolveOptions& options = job.options;
  // float32 work with refinement is held to 1e-6 where A_V is well conditioned.
  const double tol = job.r.x.dtype() == DType::Float32 ? 1e-5 : options.device_float64 ? 1e-8 : 1e-6;
  const double max_cond = options.device_float64 ? 1e8 : 1e4;
  std::vector<std::size_t> sample;
  for (const auto& w : ws) sample.insert(sample.end(), w.gpu_sample.begin(), w.gpu_sample.end());
  if (sample.empty()) return true;
  // At most kDeviceChecks of them, spread over the feeders' samples: each is
  // one gelsd, and at InSAR size one takes tens of milliseconds.
  if (sample.size() > kDeviceChecks) {
    std::vector<std::size_t> spread;
    for (std::size_t i : spread_pixels(sample.size(), kDeviceChecks)) spread.push_back(sample[i]);
    sample.swap(spread);
  }
  const SampleCheck check = check_pixels(job.cube, job.design, job.weights, job.r.x, sample, options);
  return summarize(check.pixels, tol, max_cond).ok();
}

}  // namespace cubesolve::detail
