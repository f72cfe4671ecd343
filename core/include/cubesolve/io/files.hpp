#pragma once
// Output files that appear whole or not at all: each is written under a
// temporary name beside its destination and renamed onto it once complete.

#include <cubesolve/data/array.hpp>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace cubesolve {

/// Whether `path` ends in `ext` (given in lower case, with its dot), in any case.
bool has_extension(const std::string& path, const std::string& ext);

/// A file's size and time of last change, to tell whether it changed
/// since it was read (or mapped).
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
  bool operator==(const FileStamp& o) const { return size == o.size && modified_ns == o.modified_ns; }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};
/// `path`'s stamp now. Throws IoError naming it when it cannot be read.
FileStamp stamp_of(const std::string& path);
/// Throws IoError naming `path` when its stamp is no longer `opened`:
/// "changed (or cut short) since it was opened".
void check_unchanged(const std::string& path, const FileStamp& opened);

/// Whether two paths name the same file: the same file on disk (through
/// links, "./x" and "x"), or, where they do not exist yet, the same place.
bool same_file(const std::string& a, const std::string& b);

/// The file a raster name refers to: `path` itself, or the quoted file of a
/// GDAL subdataset name such as NETCDF:"file.nc":var.
std::string file_of(const std::string& name);

/// The temporary file beside `path` that process `pid` on this host writes
/// for it: NAME~HASH.cubesolve-HOST-PID.KIND, NAME the output's file name
/// cut to 40 bytes and HASH that of the whole name, so that the name stays
/// within the file system's limit whatever the output's length, and a later
/// run can tell whose it is. `kind` is "partial" (being written) or
/// "previous" (the file an output replaces, while a set is put in place).
std::string temporary_path(const std::string& path, const char* kind = "partial");

/// Removes the temporary files beside `path` (of that output) that a process
/// of this host left when it died (killed, or its machine lost): a
/// "previous" file goes back onto `path` where that is missing (its set
/// was being put in place). Returns one line per file, saying what was
/// done, for the caller to show. Never throws.
std::vector<std::string> remove_stale_temporaries(const std::string& path);

/// A file written under a temporary name beside its destination (see
/// temporary_path) and renamed onto it only by commit(), so that a failure
/// never leaves a half file. The destructor removes the temporary file when
/// commit() was not called.
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
  friend class OutputSet;  // which renames its files itself, all or none
};

/// Several output files that appear together or not at all: each is written
/// to a temporary file; commit() renames them all once every one is complete.
/// Files they replace are moved aside first and put back if any rename
/// fails, so that the set on disk is the old one or the new one.
class OutputSet {
public:
  /// Starts a file; write to the returned stream. Removes the temporary
  /// files of `path` that dead processes left (see notices()). Throws
  /// IoError; InputError where `path` is a folder or another file's of the set.
  std::ostream& add(const std::string& path);
  /// Convenience: adds `path` holding `array` as .npy. Throws as add(), and
  /// IoError when the write fails.
  void add_npy(const std::string& path, const Array& array);
  /// Starts a file that another library writes by name: returns the
  /// temporary path to write; it is renamed onto `path` by commit(). Throws
  /// as add().
  std::string add_external(const std::string& path);
  /// Closes and renames every file, all or none. Throws IoError.
  void commit();
  std::vector<std::string> paths() const;
  /// Their temporary files, in the same order.
  std::vector<std::string> temp_paths() const;
  /// What was done about dead processes' temporary files (remove_stale_temporaries).
  const std::vector<std::string>& notices() const { return notices_; }

private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
  std::vector<std::string> notices_;
};

/// The user's cache folder for CubeSolve: $XDG_CACHE_HOME/cubesolve, else
/// ~/.cache/cubesolve, else the system's temporary folder (not created here).
std::string cache_folder();

/// An array of `shape` kept in a file of `folder` (created where missing)
/// and mapped for reading and writing: the system pages it in as it is read
/// and out when memory is short, so that it may be far larger than memory.
/// The file is removed at once (it lives as long as the array, whatever
/// ends the process) and its space reserved, so that a full disk is an
/// IoError here, naming the folder, the bytes and `what` they hold, not a
/// fault on a write. Its values are 0 at first.
Array scratch_array(DType dtype, const Shape& shape, const std::string& folder, const char* what = "results");

/// Bytes of memory the system could give now without swapping
/// (MemAvailable; the physical memory where that cannot be read).
std::size_t available_memory();

}  // namespace cubesolve
