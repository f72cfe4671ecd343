#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace cubesolve {

bool has_extension(const std::string& path, const std::string& ext) {
  return path.size() >= ext.size() && std::equal(ext.rbegin(), ext.rend(), path.rbegin(), [](char e, char c) {
           return std::tolower(static_cast<unsigned char>(c)) == e;
         });
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

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temp_ = path_ + ".partial-" + std::to_string(::getpid());
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
  for (auto& f : files_) f->commit();
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

}  // namespace cubesolve
