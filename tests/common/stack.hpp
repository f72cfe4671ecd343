#pragma once
// MintPy stacks (ifgramStack.h5) written for the tests with the HDF5 library.
#ifdef CUBESOLVE_TEST_HDF5

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

namespace testing {

/// What a stack may hold besides its phase: coherence and connectComponent
/// (N, H, W) float32, refPhase (N,), string attributes (REF_Y, NCORRLOOKS, ...).
struct StackExtras {
  const float* coherence = nullptr;
  const float* connect = nullptr;
  const float* ref_phase = nullptr;
  std::vector<std::pair<std::string, std::string>> attributes;
};

/// A text attribute of `object`, as h5py writes str: variable-length UTF-8.
inline void write_text_attribute(hid_t object, const std::string& name, const std::string& value) {
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  const hid_t sp = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(object, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = value.c_str();
  H5Awrite(a, t, &text);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

/// unwrapPhase (N, H, W) float32; date (N, 2) fixed strings of 8 characters
/// (`dates`: the 16 N characters, or null for none); dropIfgram (N,) as
/// h5py stores NumPy booleans (an 8-bit enum FALSE/TRUE), `keep` 1 or 0.
inline void write_stack(const std::string& path, hsize_t N, hsize_t H, hsize_t W, const float* phase,
                        const std::string* dates, const unsigned char* keep, const StackExtras& extras = {}) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t d3[3] = {N, H, W}, d2[2] = {N, 2}, d1[1] = {N};
  auto dataset = [&](const char* name, hid_t type, int rank, const hsize_t* dims, const void* data) {
    const hid_t s = H5Screate_simple(rank, dims, nullptr);
    const hid_t ds = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(s);
  };
  dataset("unwrapPhase", H5T_NATIVE_FLOAT, 3, d3, phase);
  if (dates) {
    const hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 8);
    H5Tset_strpad(st, H5T_STR_NULLPAD);
    dataset("date", st, 2, d2, dates->data());
    H5Tclose(st);
  }
  const hid_t bt = H5Tenum_create(H5T_NATIVE_INT8);
  signed char no = 0, yes = 1;
  H5Tenum_insert(bt, "FALSE", &no);
  H5Tenum_insert(bt, "TRUE", &yes);
  dataset("dropIfgram", bt, 1, d1, keep);
  H5Tclose(bt);
  if (extras.coherence) dataset("coherence", H5T_NATIVE_FLOAT, 3, d3, extras.coherence);
  if (extras.connect) dataset("connectComponent", H5T_NATIVE_FLOAT, 3, d3, extras.connect);
  if (extras.ref_phase) dataset("refPhase", H5T_NATIVE_FLOAT, 1, d1, extras.ref_phase);
  for (const auto& [name, value] : extras.attributes) write_text_attribute(f, name, value);
  H5Fclose(f);
}

/// A map of MintPy's maps files (velocity.h5, ...): a 2-D dataset, its
/// UNIT attribute where `unit` is not empty.
struct MapPlane {
  std::string name;
  std::vector<float> values;  // H * W
  std::string unit;
};

/// A file of maps (H, W) as MintPy writes velocity.h5, with root
/// `attributes`; `extras` adds a 1-D dataset and a group (which are no maps).
inline void write_maps(const std::string& path, hsize_t H, hsize_t W, const std::vector<MapPlane>& planes,
                       const std::vector<std::pair<std::string, std::string>>& attributes, bool extras = false) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t d2[2] = {H, W}, d1[1] = {3};
  for (const auto& p : planes) {
    const hid_t s = H5Screate_simple(2, d2, nullptr);
    const hid_t ds = H5Dcreate2(f, p.name.c_str(), H5T_NATIVE_FLOAT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.values.data());
    if (!p.unit.empty()) write_text_attribute(ds, "UNIT", p.unit);
    H5Dclose(ds);
    H5Sclose(s);
  }
  if (extras) {
    const float v[3] = {1, 2, 3};
    const hid_t s = H5Screate_simple(1, d1, nullptr);
    const hid_t ds = H5Dcreate2(f, "bperp", H5T_NATIVE_FLOAT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(ds);
    H5Sclose(s);
    H5Gclose(H5Gcreate2(f, "group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  }
  for (const auto& [name, value] : attributes) write_text_attribute(f, name, value);
  H5Fclose(f);
}

/// A dataset of a file read as float32 (empty when absent), and its dimensions.
inline std::vector<float> read_floats(const std::string& path, const char* name, std::vector<hsize_t>* dims = nullptr) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  std::vector<float> out;
  if (f < 0) return out;
  const hid_t ds = H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
  if (ds >= 0) {
    const hid_t sp = H5Dget_space(ds);
    std::vector<hsize_t> d(static_cast<std::size_t>(H5Sget_simple_extent_ndims(sp)));
    H5Sget_simple_extent_dims(sp, d.data(), nullptr);
    hsize_t n = 1;
    for (hsize_t v : d) n *= v;
    out.resize(n);
    H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
    if (dims) *dims = d;
    H5Sclose(sp);
    H5Dclose(ds);
  }
  H5Fclose(f);
  return out;
}

/// A string attribute of the file's root ("" when absent).
inline std::string read_attribute(const std::string& path, const char* name) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  std::string out;
  if (f >= 0 && H5Aexists(f, name) > 0) {
    const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    const hid_t t = H5Aget_type(a);  // variable-length text, as h5py writes str
    char* text = nullptr;
    if (H5Aread(a, t, &text) >= 0 && text) {
      out = text;
      H5free_memory(text);
    }
    H5Tclose(t);
    H5Aclose(a);
  }
  if (f >= 0) H5Fclose(f);
  return out;
}

}  // namespace testing

#endif
