#include <cubesolve/designs.hpp>
#include <cubesolve/error.hpp>

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

#ifndef CUBESOLVE_HAS_HDF5

bool stack_support() { return false; }

InsarStack read_mintpy_stack(const std::string& path) {
  throw InputError(path + ": expected a .npy cube (this build reads no HDF5 stacks: it was built without HDF5)");
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

}  // namespace

InsarStack read_mintpy_stack(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become messages, not prints
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    if (FILE* f = std::fopen(path.c_str(), "rb")) std::fclose(f);
    else throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
    throw InputError(path + ": expected an HDF5 file (a MintPy ifgramStack.h5), found something else");
  }
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.id < 0) throw IoError(path + ": cannot open the HDF5 file");
  auto open = [&](const char* name) {
    if (H5Lexists(file.id, name, H5P_DEFAULT) <= 0) return hid_t{-1};
    return H5Dopen2(file.id, name, H5P_DEFAULT);
  };
  InsarStack s;
  Handle phase(open("unwrapPhase"), H5Dclose);
  if (phase.id < 0) throw InputError(path + ": expected a dataset 'unwrapPhase' (N, H, W), found none");
  const auto d = dims_of(phase.id);
  if (d.size() != 3) throw InputError(path + ": expected 'unwrapPhase' of 3 dimensions (N, H, W), found shape " + shape_text(d));
  s.cube = Array(DType::Float32, {d[0], d[1], d[2]});
  if (H5Dread(phase.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.cube.raw()) < 0)
    throw IoError(path + ": cannot read 'unwrapPhase'");
  const std::size_t N = d[0];

  Handle date(open("date"), H5Dclose);
  if (date.id < 0) throw InputError(path + ": expected a dataset 'date' (N x 2 dates YYYYMMDD) for the sbas design, found none");
  const auto dd = dims_of(date.id);
  if (dd.size() != 2 || dd[0] != N || dd[1] != 2)
    throw InputError(path + ": expected 'date' of shape (" + std::to_string(N) + ", 2), found " + shape_text(dd));
  Handle ftype(H5Dget_type(date.id), H5Tclose);
  if (H5Tget_class(ftype.id) != H5T_STRING || H5Tis_variable_str(ftype.id) > 0)
    throw InputError(path + ": expected 'date' as fixed-length strings YYYYMMDD, found another type");
  const std::size_t len = H5Tget_size(ftype.id);
  Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mtype.id, len);
  H5Tset_strpad(mtype.id, H5T_STR_NULLPAD);
  std::vector<char> buf(N * 2 * len);
  if (H5Dread(date.id, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0) throw IoError(path + ": cannot read 'date'");
  auto text = [&](std::size_t k) {
    std::string t(buf.data() + k * len, len);
    t.erase(std::find(t.begin(), t.end(), '\0'), t.end());
    t.erase(t.find_last_not_of(' ') + 1);
    return t;
  };
  for (std::size_t i = 0; i < N; ++i) s.pairs.emplace_back(text(2 * i), text(2 * i + 1));

  s.keep.assign(N, true);
  Handle drop(open("dropIfgram"), H5Dclose);
  if (drop.id >= 0) {
    if (dims_of(drop.id) != std::vector<hsize_t>{N})
      throw InputError(path + ": expected 'dropIfgram' of shape (" + std::to_string(N) + ",), found " + shape_text(dims_of(drop.id)));
    // NumPy booleans are an 8-bit enum in HDF5; read them as stored.
    Handle t(H5Dget_type(drop.id), H5Tclose);
    if (H5Tget_size(t.id) != 1) throw InputError(path + ": expected 'dropIfgram' of booleans, found " + std::to_string(H5Tget_size(t.id)) + "-byte values");
    std::vector<unsigned char> flags(N);
    if (H5Dread(drop.id, t.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags.data()) < 0) throw IoError(path + ": cannot read 'dropIfgram'");
    for (std::size_t i = 0; i < N; ++i) s.keep[i] = flags[i] != 0;
  }
  return s;
}

#endif

}  // namespace cubesolve
