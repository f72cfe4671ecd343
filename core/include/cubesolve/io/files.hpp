#pragma once
// Output files that appear whole or not at all: each is written under a
// temporary name beside its destination and renamed onto it once complete.

#include <cubesolve/data/array.hpp>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace cubesolve {

/// Whether `path` ends in `ext` (given in lower case, with its dot), in any case.
bool has_extension(const std::string& path, const std::string& ext);

/// Whether two paths name the same file: the same file on disk (through
/// links, "./x" and "x"), or, where they do not exist yet, the same place.
bool same_file(const std::string& a, const std::string& b);

/// The file a raster name refers to: `path` itself, or the quoted file of a
/// GDAL subdataset name such as NETCDF:"file.nc":var.
std::string file_of(const std::string& name);

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
  /// Their temporary files, in the same order.
  std::vector<std::string> temp_paths() const;

private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

}  // namespace cubesolve
