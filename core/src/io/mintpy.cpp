#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/stream.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#ifdef CUBESOLVE_HAS_HDF5
#include <hdf5.h>
#endif

namespace cubesolve {

InsarStack kept_only(const InsarStack& s) {
  const std::size_t N = s.cube.dim(0), P = s.cube.dim(1) * s.cube.dim(2);
  const std::size_t kept = static_cast<std::size_t>(std::count(s.keep.begin(), s.keep.end(), true));
  InsarStack out{Array(s.cube.dtype(), {kept, s.cube.dim(1), s.cube.dim(2)}), {}, std::vector<bool>(kept, true)};
  const std::size_t item = dtype_size(s.cube.dtype());
  for (std::size_t i = 0, k = 0; i < N; ++i) {
    if (!s.keep[i]) continue;
    std::memcpy(static_cast<char*>(out.cube.raw()) + k * P * item, static_cast<const char*>(s.cube.raw()) + i * P * item, P * item);
    out.pairs.push_back(s.pairs[i]);
    ++k;
  }
  return out;
}

bool is_stack_path(const std::string& path) { return has_extension(path, ".h5") || has_extension(path, ".he5"); }

#ifndef CUBESOLVE_HAS_HDF5

bool stack_support() { return false; }

InsarStack read_mintpy_stack(const std::string& path) {
  throw InputError(path + ": expected a .npy cube (this build reads no HDF5 stacks: it was built without HDF5)");
}

std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>*) {
  read_mintpy_stack(path);
  return nullptr;
}

#else

bool stack_support() { return true; }

namespace {

struct Handle {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  ~Handle() {
    if (id >= 0 && close) close(id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

std::vector<hsize_t> dims_of(hid_t dataset) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int nd = H5Sget_simple_extent_ndims(space.id);
  std::vector<hsize_t> d(static_cast<std::size_t>(std::max(nd, 0)));
  if (nd > 0) H5Sget_simple_extent_dims(space.id, d.data(), nullptr);
  return d;
}

std::string shape_text(const std::vector<hsize_t>& d) {
  Shape s(d.begin(), d.end());
  return shape_string(s);
}

// unwrapPhase of a MintPy stack, read a block of rows at a time (HDF5
// hyperslabs), for the interferograms in `bands`.
class StackReader : public CubeReader {
public:
  StackReader(const std::string& path, std::vector<DatePair>* pairs, std::vector<bool>* keep, bool kept_only)
      : path_(path), file_(-1, H5Fclose), phase_(-1, H5Dclose) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become messages, not prints
    if (H5Fis_hdf5(path.c_str()) <= 0) {
      if (FILE* f = std::fopen(path.c_str(), "rb")) std::fclose(f);
      else throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
      throw InputError(path + ": expected an HDF5 file (a MintPy ifgramStack.h5), found something else");
    }
    file_.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_.id < 0) throw IoError(path + ": cannot open the HDF5 file");
    phase_.id = open("unwrapPhase");
    if (phase_.id < 0) throw InputError(path + ": expected a dataset 'unwrapPhase' (N, H, W), found none");
    const auto d = dims_of(phase_.id);
    if (d.size() != 3) throw InputError(path + ": expected 'unwrapPhase' of 3 dimensions (N, H, W), found shape " + shape_text(d));
    const std::size_t N = d[0];
    std::vector<DatePair> all_pairs = read_dates(N);
    std::vector<bool> all_keep = read_keep(N);
    for (std::size_t i = 0; i < N; ++i)
      if (all_keep[i] || !kept_only) bands_.push_back(i);
    shape_ = {bands_.size(), d[1], d[2]};
    dtype_ = DType::Float32;
    if (pairs)
      for (std::size_t i : bands_) pairs->push_back(all_pairs[i]);
    if (keep)
      for (std::size_t i : bands_) keep->push_back(all_keep[i]);
  }

  Array rows(std::size_t r0, std::size_t r1) override {
    const std::size_t R = r1 - r0, W = shape_[2];
    Array out(DType::Float32, {bands_.size(), R, W});
    Handle space(H5Dget_space(phase_.id), H5Sclose);
    const hsize_t count[3] = {1, R, W}, mem[1] = {R * W};
    Handle memspace(H5Screate_simple(1, mem, nullptr), H5Sclose);
    for (std::size_t k = 0; k < bands_.size(); ++k) {
      const hsize_t start[3] = {bands_[k], r0, 0};
      H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, count, nullptr);
      if (H5Dread(phase_.id, H5T_NATIVE_FLOAT, memspace.id, space.id, H5P_DEFAULT, out.data<float>() + k * R * W) < 0)
        throw IoError(path_ + ": cannot read 'unwrapPhase' rows " + std::to_string(r0) + " to " + std::to_string(r1));
    }
    return out;
  }

private:
  hid_t open(const char* name) {
    if (H5Lexists(file_.id, name, H5P_DEFAULT) <= 0) return -1;
    return H5Dopen2(file_.id, name, H5P_DEFAULT);
  }

  std::vector<DatePair> read_dates(std::size_t N) {
    Handle date(open("date"), H5Dclose);
    if (date.id < 0) throw InputError(path_ + ": expected a dataset 'date' (N x 2 dates YYYYMMDD) for the sbas design, found none");
    const auto dd = dims_of(date.id);
    if (dd.size() != 2 || dd[0] != N || dd[1] != 2)
      throw InputError(path_ + ": expected 'date' of shape (" + std::to_string(N) + ", 2), found " + shape_text(dd));
    Handle ftype(H5Dget_type(date.id), H5Tclose);
    if (H5Tget_class(ftype.id) != H5T_STRING || H5Tis_variable_str(ftype.id) > 0)
      throw InputError(path_ + ": expected 'date' as fixed-length strings YYYYMMDD, found another type");
    const std::size_t len = H5Tget_size(ftype.id);
    Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.id, len);
    H5Tset_strpad(mtype.id, H5T_STR_NULLPAD);
    std::vector<char> buf(N * 2 * len);
    if (H5Dread(date.id, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0) throw IoError(path_ + ": cannot read 'date'");
    auto text = [&](std::size_t k) {
      std::string t(buf.data() + k * len, len);
      t.erase(std::find(t.begin(), t.end(), '\0'), t.end());
      t.erase(t.find_last_not_of(' ') + 1);
      return t;
    };
    std::vector<DatePair> pairs;
    for (std::size_t i = 0; i < N; ++i) pairs.emplace_back(text(2 * i), text(2 * i + 1));
    return pairs;
  }

  std::vector<bool> read_keep(std::size_t N) {
    std::vector<bool> keep(N, true);
    Handle drop(open("dropIfgram"), H5Dclose);
    if (drop.id < 0) return keep;
    if (dims_of(drop.id) != std::vector<hsize_t>{N})
      throw InputError(path_ + ": expected 'dropIfgram' of shape (" + std::to_string(N) + ",), found " + shape_text(dims_of(drop.id)));
    // NumPy booleans are an 8-bit enum in HDF5; read them as stored.
    Handle t(H5Dget_type(drop.id), H5Tclose);
    if (H5Tget_size(t.id) != 1)
      throw InputError(path_ + ": expected 'dropIfgram' of booleans, found " + std::to_string(H5Tget_size(t.id)) + "-byte values");
    std::vector<unsigned char> flags(N);
    if (H5Dread(drop.id, t.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags.data()) < 0) throw IoError(path_ + ": cannot read 'dropIfgram'");
    for (std::size_t i = 0; i < N; ++i) keep[i] = flags[i] != 0;
    return keep;
  }

  std::string path_;
  Handle file_, phase_;
  std::vector<std::size_t> bands_;
};

}  // namespace

std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>* pairs) {
  return std::make_unique<StackReader>(path, pairs, nullptr, true);
}

InsarStack read_mintpy_stack(const std::string& path) {
  InsarStack s;
  StackReader reader(path, &s.pairs, &s.keep, false);
  s.cube = reader.rows(0, reader.shape()[1]);
  return s;
}

#endif

}  // namespace cubesolve
