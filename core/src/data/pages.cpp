#include "data/pages.hpp"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cubesolve::detail {

namespace {
std::size_t round_up(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

#if defined(__linux__) && defined(MADV_HUGEPAGE)

bool mappable(std::size_t bytes) { return bytes >= kHugePage; }

void* map_pages(std::size_t bytes) {
  // Map one page more than needed, then unmap the ends that are not aligned.
  const std::size_t size = round_up(bytes), span = size + kHugePage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  char* base = static_cast<char*>(p);
  char* aligned = base + (kHugePage - reinterpret_cast<std::uintptr_t>(base) % kHugePage) % kHugePage;
  if (aligned > base) munmap(base, static_cast<std::size_t>(aligned - base));
  const std::size_t tail = span - static_cast<std::size_t>(aligned - base) - size;
  if (tail > 0) munmap(aligned + size, tail);
  madvise(aligned, size, MADV_HUGEPAGE);  // advice only: without huge pages the mapping serves as it is
  return aligned;
}

void unmap_pages(void* p, std::size_t bytes) noexcept { munmap(p, round_up(bytes)); }

#else

bool mappable(std::size_t) { return false; }
void* map_pages(std::size_t) { throw std::bad_alloc(); }
void unmap_pages(void*, std::size_t) noexcept {}

#endif

}  // namespace cubesolve::detail
