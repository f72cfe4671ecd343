#pragma once
// Storage for the engine's large arrays (H, P, the rows kernel's chunk
// copy and x0): blocks of 2 MiB and more are mapped on their own, aligned
// to 2 MiB and marked for transparent huge pages where the system offers
// them. The deletion systems read H at scattered columns of scattered rows:
// on 4 KiB pages most of those reads would also miss the TLB. (The
// pixel-major chunk arrays stay on the heap: there fresh huge pages at each
// solve cost the band Gram path more than they saved.)

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cubesolve::detail {

template <class T>
struct LargePages {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{1} << 21;

  LargePages() = default;
  template <class U>
  LargePages(const LargePages<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= kHuge) {
      // Map one page more than needed, then unmap the ends that are not aligned.
      const std::size_t size = round_up(bytes), span = size + kHuge;
      void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      char* base = static_cast<char*>(p);
      char* aligned = base + (kHuge - reinterpret_cast<std::uintptr_t>(base) % kHuge) % kHuge;
      if (aligned > base) munmap(base, static_cast<std::size_t>(aligned - base));
      const std::size_t tail = span - static_cast<std::size_t>(aligned - base) - size;
      if (tail > 0) munmap(aligned + size, tail);
      madvise(aligned, size, MADV_HUGEPAGE);  // advice only: without huge pages the mapping serves as it is
      return reinterpret_cast<T*>(aligned);
    }
#endif
    return static_cast<T*>(::operator new(bytes));
  }

  void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n * sizeof(T) >= kHuge) {
      munmap(p, round_up(n * sizeof(T)));
      return;
    }
#endif
    ::operator delete(p);
  }

  static std::size_t round_up(std::size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }
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
