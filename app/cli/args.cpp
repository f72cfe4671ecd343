#include "args.hpp"

#include <cubesolve/error.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace cubesolve::cli {

Args::Args(std::string command, const std::vector<std::string>& argv, const std::set<std::string>& flags,
           const std::set<std::string>& options)
    : command_(std::move(command)) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string a = argv[i];
    if (a == "-o") a = "--output";
    if (a.size() < 2 || a.compare(0, 2, "--") != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (flags.count(name)) {
      if (has_value) throw InputError("--" + name + ": takes no value, found '" + value + "'");
      flags_.insert(name);
    } else if (options.count(name)) {
      if (!has_value) {
        if (i + 1 >= argv.size()) throw InputError("--" + name + ": expected a value, found the end of the command");
        value = argv[++i];
      }
      values_[name] = value;
    } else {
      throw InputError(command_ + ": unknown option --" + name + " (see cubesolve-cli --help)");
    }
  }
}

std::optional<std::string> Args::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

double Args::number(const std::string& name, double fallback) const {
  const auto v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || errno == ERANGE || !std::isfinite(d))
    throw InputError("--" + name + ": expected a number, found '" + *v + "'");
  return d;
}

long Args::integer(const std::string& name, long fallback, long min, long max) const {
  const auto v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno == ERANGE || n < min || n > max)
    throw InputError("--" + name + ": expected an integer from " + std::to_string(min) + " to " +
                     std::to_string(max) + ", found '" + *v + "'");
  return n;
}

void Args::expect_positional(std::size_t min, std::size_t max, const std::string& usage) const {
  if (positional_.size() < min || positional_.size() > max)
    throw InputError(command_ + ": expected " + usage + ", found " + std::to_string(positional_.size()) +
                     " argument(s)");
}

}  // namespace cubesolve::cli
