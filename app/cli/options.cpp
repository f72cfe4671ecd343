#include "options.hpp"

#include <cubesolve/error.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <sys/resource.h>

namespace cubesolve::cli {

SolveOptions solve_options(const Args& args) {
  SolveOptions o;
  o.rcond = args.number("rcond", -1.0);
  o.min_valid = static_cast<int>(args.integer("min-valid", 1, 1, 1 << 30));
  o.ridge = args.number("ridge", 0.0);
  if (o.ridge < 0) throw InputError("--ridge: expected a value >= 0, found " + args.get("ridge", ""));
  o.threads = static_cast<int>(args.integer("threads", 0, 0, 4096));
  if (const auto d = args.get("dtype")) o.output = parse_dtype(*d, "--dtype");
  o.memory = static_cast<std::size_t>(args.integer("memory", 256, 16, 1 << 20)) << 20;
  if (const auto loss = args.get("loss")) o.loss = parse_loss(*loss, o.huber_delta, "--loss");
  o.tolerance = args.number("tol", 1e-6);
  if (!(o.tolerance > 0 && o.tolerance < 1)) throw InputError("--tol: expected a value in (0, 1), found " + args.get("tol", ""));
  o.max_iterations = static_cast<int>(args.integer("max-iter", 500, 1, 1 << 30));
  const std::string method = args.get("method", "auto");
  if (method == "exact") o.method = Method::Exact;
  else if (method != "auto") throw InputError("--method: expected auto or exact, found '" + method + "'");
  return o;
}

const std::set<std::string> kInputFlags{"no-ref", "keep-zero"};
const std::set<std::string> kInputOptions{"nodata",      "ref-yx", "ref-radius",  "mask-dataset", "mask-threshold",
                                          "weight-func", "looks",  "formulation"};

InputOptions input_options(const Args& args, bool stack) {
  InputOptions o;
  if (args.get("nodata")) o.nodata = args.number("nodata", 0.0);
  StackOptions& s = o.stack;
  s.reference = !args.flag("no-ref");
  s.zero_is_nodata = !args.flag("keep-zero");
  if (const auto yx = args.get("ref-yx")) {
    const auto comma = yx->find(',');
    char* end = nullptr;
    const long y = comma == std::string::npos ? -1 : std::strtol(yx->c_str(), &end, 10);
    const bool y_ok = end == yx->c_str() + comma;
    const long x = y_ok ? std::strtol(yx->c_str() + comma + 1, &end, 10) : -1;
    if (!y_ok || *end != '\0' || y < 0 || x < 0 || comma + 1 == yx->size())
      throw InputError("--ref-yx: expected a pixel as ROW,COLUMN (e.g. 120,340), found '" + *yx + "'");
    s.ref_y = y;
    s.ref_x = x;
    if (!s.reference) throw InputError("--ref-yx: expected a reference pixel or --no-ref, found both");
  }
  if (const auto r = args.get("ref-radius")) {
    const double radius = args.number("ref-radius", 0.0);
    if (!(radius >= 0 && radius <= 1000 && radius == std::floor(radius)))
      throw InputError("--ref-radius: expected the reference area's half-width in pixels (a whole number from 0 to 1000), found '" + *r + "'");
    if (!s.reference) throw InputError("--ref-radius: expected a reference area or --no-ref, found both");
    s.ref_radius = static_cast<long>(radius);
  }
  s.mask = args.get("mask-dataset", "");
  s.mask_threshold = args.number("mask-threshold", 0.4);
  s.weight = args.get("weight-func", "no");
  if (s.weight != "no" && s.weight != "var" && s.weight != "fim" && s.weight != "coh")
    throw InputError("--weight-func: expected var, fim, coh or no, found '" + s.weight + "'");
  s.looks = args.number("looks", 0.0);  // 0: the file's
  if (args.get("looks") && !(s.looks >= 1))
    throw InputError("--looks: expected the number of independent looks (>= 1), found '" + *args.get("looks") + "'");
  const std::string formulation = args.get("formulation", "phase");
  if (formulation != "phase" && formulation != "velocity")
    throw InputError("--formulation: expected phase or velocity, found '" + formulation + "'");
  o.velocity = formulation == "velocity";
  if (!stack)  // every input option but --nodata is a stack's
    for (const auto& names : {kInputFlags, kInputOptions})
      for (const std::string& name : names)
        if (name != "nodata" && (args.get(name) || args.flag(name)))
          throw InputError("--" + name + ": expected a MintPy stack (ifgramStack.h5 with the design sbas), found another cube");
  return o;
}

std::set<std::string> with_inputs(std::set<std::string> names, const std::set<std::string>& inputs) {
  names.insert(inputs.begin(), inputs.end());
  return names;
}

// VmHWM (which, unlike ru_maxrss, does not inherit the peak of the process
// that started this one).
double peak_memory_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace cubesolve::cli
