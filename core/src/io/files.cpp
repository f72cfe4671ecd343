#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cubesolve {

bool has_extension(const std::string& path, const std::string& ext) {
  return path.size() >= ext.size() && std::equal(ext.rbegin(), ext.rend(), path.rbegin(), [](char e, char c) {
           return std::tolower(static_cast<unsigned char>(c)) == e;
         });
}

FileStamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError(path + ": cannot read: " + std::strerror(errno));
  return {static_cast<std::uint64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + static_cast<std::int64_t>(st.st_mtim.tv_nsec)};
}

void check_unchanged(const std::string& path, const FileStamp& opened) {
  const FileStamp now = stamp_of(path);
  if (now != opened)
    throw IoError(path + ": expected the file as it was opened (" + std::to_string(opened.size) + " bytes), found it " +
                  (now.size < opened.size ? "cut short to " + std::to_string(now.size) + " bytes" : "changed") +
                  " since: open it again");
}

Array read_array(const std::string& path) {
  if (has_extension(path, ".csv") || has_extension(path, ".txt")) return read_csv_matrix(path);
  return read_npy(path);
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec), pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && pa == pb;
}

std::string file_of(const std::string& name) {
  const auto open = name.find(":\"");
  if (open == std::string::npos) return name;
  const auto close = name.find('"', open + 2);
  return close == std::string::npos ? name : name.substr(open + 2, close - open - 2);
}

namespace {

/// This machine's name as it appears in temporary files: letters, digits,
/// '-' and '.', at most 32 of them.
std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "host";
  std::string h;
  for (const char* c = buf; *c && h.size() < 32; ++c)
    h += std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' || *c == '.' ? *c : '_';
  return h;
}

/// FNV-1a, 64 bits, in hex.
std::string name_hash(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// What the temporary files of `path` start with: its folder and NAME~HASH.cubesolve-
std::string temporary_stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + name.substr(0, 40) + "~" + name_hash(name) + ".cubesolve-";
}

bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::string temporary_path(const std::string& path, const char* kind) {
  return temporary_stem(path) + host_name() + "-" + std::to_string(::getpid()) + "." + kind;
}

std::vector<std::string> remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> done;
  const std::string stem = temporary_stem(path), host = host_name() + "-";
  const auto slash = stem.find_last_of('/');
  const std::string prefix = stem.substr(slash == std::string::npos ? 0 : slash + 1);
  std::error_code ec;
  const fs::path dir = slash == std::string::npos ? fs::path(".") : fs::path(stem.substr(0, slash + 1));
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0 || name.compare(prefix.size(), host.size(), host) != 0) continue;
    const std::string rest = name.substr(prefix.size() + host.size());  // PID.KIND
    const auto dot = rest.find('.');
    if (dot == std::string::npos || dot == 0 || rest.find_first_not_of("0123456789") != dot) continue;
    const std::string kind = rest.substr(dot + 1);
    const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if ((kind != "partial" && kind != "previous") || !process_gone(pid)) continue;
    const std::string file = it->path().string();
    std::error_code e2;
    if (kind == "previous" && !fs::exists(path, e2)) {
      if (std::rename(file.c_str(), path.c_str()) == 0)
        done.push_back(path + ": put back from " + file + ", left by process " + std::to_string(pid) +
                       ", which died while replacing it");
      continue;
    }
    if (fs::remove(file, e2))
      done.push_back("removed " + file + ", left by process " + std::to_string(pid) + " on this host, which is no longer running");
  }
  return done;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temp_ = temporary_path(path_);
  out_ = std::make_unique<std::ofstream>(temp_, std::ios::binary | std::ios::trunc);
  if (!*out_) throw IoError(path_ + ": cannot open for writing: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.reset();
    std::remove(temp_.c_str());
  }
}

std::ostream& AtomicFile::stream() { return *out_; }

void AtomicFile::close() {
  if (!out_->is_open()) return;
  out_->flush();
  const bool ok = static_cast<bool>(*out_);
  out_->close();
  if (!ok || out_->fail()) throw IoError(path_ + ": write failed (disk full?)");
}

void AtomicFile::commit() {
  close();
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw IoError(path_ + ": cannot move the finished file into place: " + std::strerror(errno));
  committed_ = true;
}

std::ostream& OutputSet::add(const std::string& path) {
  for (const auto& f : files_)
    if (same_file(f->path(), path))
      throw InputError(path + ": expected each output in a file of its own, found " + f->path() + " there too");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": expected a file to write, found a folder of that name");
  for (std::string& n : remove_stale_temporaries(path)) notices_.push_back(std::move(n));
  files_.push_back(std::make_unique<AtomicFile>(path));
  return files_.back()->stream();
}

void OutputSet::add_npy(const std::string& path, const Array& array) {
  std::ostream& out = add(path);
  try {
    write_npy(out, array);
  } catch (const IoError&) {
    throw IoError(path + ": write failed (disk full?)");
  }
}

std::string OutputSet::add_external(const std::string& path) {
  add(path);
  files_.back()->close();
  return files_.back()->temp_path();
}

void OutputSet::commit() {
  for (auto& f : files_) f->close();
  // The files the set replaces go aside first; on any failure every file
  // goes back where it was, and the error names the one that failed.
  std::vector<std::pair<std::string, std::string>> aside;  // (destination, where it went)
  std::size_t placed = 0;
  auto undo = [&] {
    for (std::size_t k = placed; k-- > 0;) std::rename(files_[k]->path().c_str(), files_[k]->temp_path().c_str());
    for (const auto& [path, moved] : aside) std::rename(moved.c_str(), path.c_str());
  };
  std::error_code ec;
  for (auto& f : files_) {
    if (std::filesystem::is_directory(f->path(), ec)) {  // made since add(): moved aside, it would go with the set
      undo();
      throw IoError(f->path() + ": expected a file to replace, found a folder; no output was written");
    }
    if (!std::filesystem::exists(f->path(), ec)) continue;
    const std::string moved = temporary_path(f->path(), "previous");
    if (std::rename(f->path().c_str(), moved.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      undo();
      throw IoError(f->path() + ": cannot replace the file: " + why + "; no output was written");
    }
    aside.emplace_back(f->path(), moved);
  }
  for (; placed < files_.size(); ++placed) {
    AtomicFile& f = *files_[placed];
    if (std::rename(f.temp_path().c_str(), f.path().c_str()) != 0) {
      const std::string why = std::strerror(errno);
      undo();
      throw IoError(f.path() + ": cannot move the finished file into place: " + why + "; no output was written");
    }
  }
  for (auto& f : files_) f->committed_ = true;
  for (const auto& [path, moved] : aside) std::remove(moved.c_str());
  files_.clear();
}

std::vector<std::string> OutputSet::temp_paths() const {
  std::vector<std::string> p;
  for (const auto& f : files_) p.push_back(f->temp_path());
  return p;
}

std::vector<std::string> OutputSet::paths() const {
  std::vector<std::string> p;
  for (const auto& f : files_) p.push_back(f->path());
  return p;
}

std::string cache_folder() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/cubesolve";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/cubesolve";
  std::error_code ec;
  const auto tmp = std::filesystem::temp_directory_path(ec);
  return (ec ? std::string("/tmp") : tmp.string()) + "/cubesolve";
}

Array scratch_array(DType dtype, const Shape& shape, const std::string& folder, const char* what) {
  const std::size_t bytes = std::max<std::size_t>(shape_size(shape) * dtype_size(dtype), 1);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  const std::string pattern = folder + "/results-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw IoError(folder + ": cannot keep " + what + " there: " + std::strerror(errno));
  ::unlink(name.data());  // gone once the mapping is
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    ::close(fd);
    throw IoError(folder + ": cannot keep " + std::to_string(bytes >> 20) + " MB of " + what + " there: " + std::strerror(err));
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) throw IoError(folder + ": cannot map a file of " + what + ": " + std::strerror(errno));
  std::shared_ptr<void> owner(base, [bytes](void* p) { ::munmap(p, bytes); });
  return Array::borrow(dtype, shape, base, std::move(owner));
}

std::size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))  // "MemAvailable:   20480000 kB" (some lines have no unit)
    if (line.rfind("MemAvailable:", 0) == 0) return std::strtoull(line.c_str() + 13, nullptr, 10) * 1024;
  const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(size) : std::size_t{1} << 32;
}

}  // namespace cubesolve
