#pragma once
// Large blocks of memory on a mapping of their own, aligned to 2 MiB and
// marked for transparent huge pages where the system offers them: a block
// read at scattered places (the engine's H) then costs a TLB entry per
// 2 MiB, and a block written once in full (a solve's outputs) a page fault
// per 2 MiB instead of one per 4 KiB.

#include <cstddef>

namespace cubesolve::detail {

constexpr std::size_t kHugePage = std::size_t{1} << 21;

/// Whether map_pages serves a block of `bytes` (on Linux, from 2 MiB).
bool mappable(std::size_t bytes);
/// A mapped block of `bytes` (mappable), untouched; throws std::bad_alloc.
void* map_pages(std::size_t bytes);
/// Returns a block from map_pages of the same `bytes`.
void unmap_pages(void* p, std::size_t bytes) noexcept;

}  // namespace cubesolve::detail
