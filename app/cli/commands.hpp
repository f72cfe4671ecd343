#pragma once
#include <string>
#include <vector>

namespace cubesolve::cli {

// Each command takes the arguments after its name and returns the exit code.
// Errors are thrown (cubesolve::Error) and turned into exit codes in main().
int cmd_solve(const std::vector<std::string>& argv);
int cmd_info(const std::vector<std::string>& argv);
int cmd_demo(const std::vector<std::string>& argv);
int cmd_verify(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);

}  // namespace cubesolve::cli
