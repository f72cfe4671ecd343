#pragma once
#include <functional>

namespace cubesolve {

/// Called with the fraction done in [0, 1], always on the thread that started
/// the operation, a few times a second. Return false to cancel: the operation
/// then throws Cancelled and returns nothing.
using Progress = std::function<bool(double fraction)>;

}  // namespace cubesolve
