#pragma once
// Distinct packed masks and how many pixels have each: an open-addressing
// hash table over the masks, kept one after the other.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cubesolve::detail {

class MaskTable {
public:
  explicit MaskTable(std::size_t words) : words_(words), slots_(16, -1) {}

  /// The group of `mask` (`words` words), added with `count` pixels, made
  /// where the table does not have it yet.
  std::size_t add(const std::uint64_t* mask, std::size_t count = 1) {
    std::size_t slot = hash(mask) & (slots_.size() - 1);
    for (;; slot = (slot + 1) & (slots_.size() - 1)) {
      const std::int32_t g = slots_[slot];
      if (g < 0) break;
      if (std::equal(mask, mask + words_, masks_.data() + static_cast<std::size_t>(g) * words_)) {
        sizes_[static_cast<std::size_t>(g)] += count;
        return static_cast<std::size_t>(g);
      }
    }
    const std::size_t g = sizes_.size();
    slots_[slot] = static_cast<std::int32_t>(g);
    masks_.insert(masks_.end(), mask, mask + words_);
    sizes_.push_back(count);
    if (2 * sizes_.size() > slots_.size()) grow();
    return g;
  }
  std::size_t groups() const { return sizes_.size(); }
  std::size_t words() const { return words_; }
  const std::uint64_t* mask(std::size_t g) const { return masks_.data() + g * words_; }
  std::vector<std::uint64_t>& masks() { return masks_; }
  std::vector<std::size_t>& sizes() { return sizes_; }
  /// Bytes a group costs (its mask, its size, two slots).
  std::size_t bytes_per_group() const { return words_ * 8 + sizeof(std::size_t) + 2 * sizeof(std::int32_t); }

private:
  std::uint64_t hash(const std::uint64_t* w) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ words_;
    for (std::size_t i = 0; i < words_; ++i) {
      h ^= w[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdULL;
      h ^= h >> 33;
    }
    return h;
  }
  void grow() {
    std::vector<std::int32_t> old(slots_.size() * 2, -1);
    slots_.swap(old);
    for (std::size_t g = 0; g < sizes_.size(); ++g) {
      std::size_t slot = hash(mask(g)) & (slots_.size() - 1);
      while (slots_[slot] >= 0) slot = (slot + 1) & (slots_.size() - 1);
      slots_[slot] = static_cast<std::int32_t>(g);
    }
  }

  std::size_t words_;
  std::vector<std::int32_t> slots_;
  std::vector<std::uint64_t> masks_;
  std::vector<std::size_t> sizes_;
};

}  // namespace cubesolve::detail
