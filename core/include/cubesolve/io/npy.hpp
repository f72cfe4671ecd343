#pragma once
// Reading and writing arrays: NumPy .npy files and CSV design matrices.
// Every message names the file, what was expected and what was found.

#include <cubesolve/data/array.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cubesolve {

/// Reads a .npy file (format versions 1, 2 and 3; either byte order; C or
/// Fortran order). float32 and float64 stay as they are; bool and integer
/// types become float64. The result is always C-ordered.
/// Throws IoError when the file cannot be opened or read, InputError when it
/// is not a .npy file this reader supports (bad magic, unknown dtype,
/// truncated header or data).
Array read_npy(const std::string& path);

/// A .npy file's values mapped read-only from the file, not read: an Array
/// over pages the system reads as they are first touched and may drop
/// again, so that a cube larger than memory can be open. Only for
/// little-endian C-ordered float32 and float64 (others come back empty:
/// read them with read_npy). Throws as read_npy for a file that is no .npy
/// or holds less than its header says. A file cut short while mapped makes
/// reading its lost pages fail (SIGBUS): check it (FileStamp) before
/// reading, or read it through a CubeReader.
Array map_npy(const std::string& path);

/// Writes `array` as a version 1, little-endian, C-ordered .npy stream.
/// Throws IoError when the stream fails.
void write_npy(std::ostream& out, const Array& array);

/// Reads a design matrix from CSV: one row per observation, values separated
/// by commas and/or white space, an optional header line (a first line that
/// does not parse as numbers). Lines starting with '#' are skipped.
/// Throws IoError (cannot open) or InputError (ragged rows, bad numbers, empty).
/// `header`, where given, receives the header's names when there is one of
/// a name per column (empty otherwise).
Array read_csv_matrix(const std::string& path, std::vector<std::string>* header = nullptr);

/// Reads an array from `path` by extension: .csv/.txt as CSV, anything else
/// as .npy. Throws as those readers.
Array read_array(const std::string& path);

}  // namespace cubesolve
