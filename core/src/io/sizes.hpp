#pragma once
// The one size check every reader makes before it allocates: what a
// header claims must fit in 64 bits and in the file that holds it.

#include <cubesolve/data/array.hpp>

#include <cstdint>
#include <string>

namespace cubesolve::detail {

/// The bytes of an array of `shape` with `item`-byte elements. Throws
/// InputError naming `path` when that does not fit in 64 bits.
std::uint64_t data_bytes(const Shape& shape, std::size_t item, const std::string& path);

/// Throws InputError ("PATH: expected a file, found a folder") where `path`
/// names a folder: opened as a file it reads as empty or as an error with
/// no cause.
void check_not_folder(const std::string& path);

/// Throws IoError when `path` cannot be read, InputError ("PATH: expected
/// BYTES bytes of WHAT from byte OFFSET, found ...") when it is shorter.
void check_file_holds(const std::string& path, std::uint64_t offset, std::uint64_t bytes, const std::string& what);

/// Throws InputError ("NAME: expected rows that fit the memory budget of
/// MEMORY MB, found rows of WIDTH pixels, which need ... MB each") where one
/// row, `row_bytes` with all a pass keeps for it (in floating point: a header
/// may declare rows whose bytes overflow), passes `usable`, the share of
/// `memory` a block may take.
void check_row_fits(const std::string& name, std::size_t width, double row_bytes, std::size_t memory, std::size_t usable);

}  // namespace cubesolve::detail
