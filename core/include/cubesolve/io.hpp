#pragma once
// Reading and writing arrays: NumPy .npy files and CSV design matrices.
// Every message names the file, what was expected and what was found.

#include <cubesolve/array.hpp>

#include <iosfwd>
#include <memory>
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

/// Writes `array` as a version 1, little-endian, C-ordered .npy stream.
/// Throws IoError when the stream fails.
void write_npy(std::ostream& out, const Array& array);

/// Reads a design matrix from CSV: one row per observation, values separated
/// by commas and/or white space, an optional header line (a first line that
/// does not parse as numbers). Lines starting with '#' are skipped.
/// Throws IoError (cannot open) or InputError (ragged rows, bad numbers, empty).
Array read_csv_matrix(const std::string& path);

/// Reads an array from `path` by extension: .csv/.txt as CSV, anything else as .npy.
Array read_array(const std::string& path);

/// A file written under a temporary name beside its destination and renamed
/// onto it only by commit(), so that a failure never leaves a half file.
/// The destructor removes the temporary file when commit() was not called.
class AtomicFile {
public:
  /// Throws IoError when the temporary file cannot be created.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream();
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  /// Flushes and closes; throws IoError if anything written failed.
  void close();
  /// Moves the finished file onto its destination. Throws IoError.
  void commit();

private:
  std::string path_;
  std::string temp_;
  std::unique_ptr<std::ofstream> out_;
  bool committed_ = false;
};

/// Several output files that appear together or not at all: each is written
/// to a temporary file; commit() renames them all once every one is complete.
class OutputSet {
public:
  /// Starts a file; write to the returned stream. Throws IoError.
  std::ostream& add(const std::string& path);
  /// Convenience: adds `path` holding `array` as .npy.
  void add_npy(const std::string& path, const Array& array);
  /// Starts a file that another library writes by name: returns the
  /// temporary path to write; it is renamed onto `path` by commit().
  std::string add_external(const std::string& path);
  /// Closes and renames every file. Throws IoError (files already renamed stay).
  void commit();
  std::vector<std::string> paths() const;

private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

}  // namespace cubesolve
