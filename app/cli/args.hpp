#pragma once
// Command-line arguments of one subcommand: options (--name value, --name=value,
// flags) and positional arguments. Every mistake is an InputError naming the
// option, what was expected and what was found.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cubesolve::cli {

class Args {
public:
  /// `flags` take no value; `options` take one. "-o" is "--output".
  Args(std::string command, const std::vector<std::string>& argv, const std::set<std::string>& flags,
       const std::set<std::string>& options);

  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  double number(const std::string& name, double fallback) const;
  long integer(const std::string& name, long fallback, long min, long max) const;

  const std::vector<std::string>& positional() const { return positional_; }
  /// Throws InputError unless there are between min and max positional arguments.
  void expect_positional(std::size_t min, std::size_t max, const std::string& usage) const;

private:
  std::string command_;
  std::set<std::string> flags_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace cubesolve::cli
