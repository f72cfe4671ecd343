#pragma once
// Storage for the engine's large arrays (H, P, the rows kernel's chunk
// copy and x0): blocks of 2 MiB and more on huge pages (see data/pages.hpp).
// The deletion systems read H at scattered columns of scattered rows: on
// 4 KiB pages most of those reads would also miss the TLB. (The pixel-major
// chunk arrays stay on the heap: there fresh huge pages at each solve cost
// the band Gram path more than they saved.)

#include "data/pages.hpp"

#include <cstddef>
#include <new>
#include <vector>

namespace cubesolve::detail {

template <class T>
struct LargePages {
  using value_type = T;

  LargePages() = default;
  template <class U>
  LargePages(const LargePages<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (mappable(bytes)) return static_cast<T*>(map_pages(bytes));
    return static_cast<T*>(::operator new(bytes));
  }

  void deallocate(T* p, std::size_t n) noexcept {
    if (mappable(n * sizeof(T))) return unmap_pages(p, n * sizeof(T));
    ::operator delete(p);
  }
};

template <class T, class U>
bool operator==(const LargePages<T>&, const LargePages<U>&) {
  return true;
}
template <class T, class U>
bool operator!=(const LargePages<T>&, const LargePages<U>&) {
  return false;
}

/// A vector of doubles on LargePages.
using LargeDoubles = std::vector<double, LargePages<double>>;

}  // namespace cubesolve::detail
