// The MintPy stack (and time series, and maps) reader on small HDF5 files built from the input: which
// datasets exist, their shapes and types, the date strings and the drop
// flags all come from the fuzzer's bytes (the HDF5 library writes a valid
// file; what is fuzzed is how the reader judges its content).
#include "fuzz.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <hdf5.h>

#include <utility>
#include <vector>

namespace {

void write_dataset(hid_t file, const char* name, hid_t type, const std::vector<hsize_t>& dims, const void* data) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds >= 0) {
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
  }
  H5Sclose(space);
}

std::string build_stack(fuzz::Bytes& in) {
  const std::string path = fuzz::temp_path(".h5");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const std::uint8_t layout = in.byte();
  const hsize_t N = in.in(0, 12), H = in.in(0, 6), W = in.in(0, 6);
  if (layout & 1) {  // unwrapPhase, 3-D or another rank
    std::vector<hsize_t> dims{N, H, W};
    if (layout & 2) dims.pop_back();
    std::vector<float> v(N * H * W);
    for (auto& x : v) x = static_cast<float>(static_cast<signed char>(in.byte())) / 8;
    write_dataset(f, layout & 128 ? "timeseries" : "unwrapPhase", H5T_NATIVE_FLOAT, dims, v.data());  // a stack, or a time series
  }
  if (layout & 4) {  // date: N x 2 fixed strings of a fuzzed length
    const std::size_t len = in.in(0, 10);
    const hsize_t rows = layout & 8 ? in.in(0, 12) : N;
    const std::string text = in.text(rows * 2 * len);
    const hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, len ? len : 1);
    H5Tset_strpad(st, H5T_STR_NULLPAD);
    std::vector<char> buf(rows * 2 * (len ? len : 1), '\0');
    std::copy(text.begin(), text.end(), buf.begin());
    if (layout & 128) write_dataset(f, "date", st, {rows * 2}, buf.data());  // a time series' dates: one per band
    else write_dataset(f, "date", st, {rows, 2}, buf.data());
    H5Tclose(st);
  }
  if (layout & 16) {  // dropIfgram: bytes, or 4-byte integers
    const hsize_t n = layout & 32 ? in.in(0, 12) : N;
    std::vector<std::int32_t> flags(n);
    for (auto& x : flags) x = in.byte() & 1;
    if (layout & 64) write_dataset(f, "dropIfgram", H5T_NATIVE_INT32, {n}, flags.data());
    else {
      std::vector<std::uint8_t> b(flags.begin(), flags.end());
      write_dataset(f, "dropIfgram", H5T_NATIVE_UINT8, {n}, b.data());
    }
  }
  const std::uint8_t extras = in.byte();
  auto attribute = [&](const char* name, const std::string& text) {  // variable-length strings, as h5py writes them
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    const hid_t sp = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    const char* c = text.c_str();
    if (a >= 0) {
      H5Awrite(a, t, &c);
      H5Aclose(a);
    }
    H5Sclose(sp);
    H5Tclose(t);
  };
  if (extras & 1) attribute("REF_Y", extras & 2 ? std::to_string(in.in(0, 7)) : in.text(in.in(0, 4)));
  if (extras & 1) attribute("REF_X", std::to_string(static_cast<int>(in.in(0, 7)) - 1));
  if (extras & 4) attribute("NCORRLOOKS", in.text(in.in(0, 5)));
  if (extras & 128) {  // a time series' unit and wavelength
    static const char* const kUnits[] = {"m", "mm", "radian", "ft"};
    attribute("UNIT", kUnits[in.byte() & 3]);
    attribute("WAVELENGTH", in.text(in.in(0, 6)));
  }
  for (const auto& [name, bit] : {std::pair{"coherence", 8}, std::pair{"connectComponent", 16}})
    if (extras & bit) {  // of unwrapPhase's shape, or not
      const std::vector<hsize_t> dims{N, H, extras & 32 ? W + 1 : W};
      std::vector<float> v(dims[0] * dims[1] * dims[2]);
      for (auto& x : v) x = static_cast<float>(in.byte()) / 200;
      write_dataset(f, name, H5T_NATIVE_FLOAT, dims, v.data());
    }
  if (extras & 64) {
    std::vector<float> v(in.in(0, 12));
    for (auto& x : v) x = static_cast<float>(static_cast<signed char>(in.byte())) / 8;
    write_dataset(f, "refPhase", H5T_NATIVE_FLOAT, {v.size()}, v.data());
  }
  const std::uint8_t maps = in.byte();  // MintPy's maps (velocity.h5): 2-D datasets of one shape, or not
  for (const auto& [name, bit] : {std::pair{"velocity", 1}, std::pair{"velocityStd", 2}, std::pair{"mask", 4}})
    if (maps & bit) {
      const std::vector<hsize_t> dims{maps & 8 ? in.in(0, 6) : H, maps & 16 ? in.in(0, 6) : W};
      std::vector<std::int32_t> v(dims[0] * dims[1]);
      for (auto& x : v) x = static_cast<signed char>(in.byte());
      write_dataset(f, name, bit == 4 ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT, dims, v.data());  // (the bytes, read as either)
    }
  if (maps & 32) attribute("FILE_TYPE", maps & 64 ? "velocity" : in.text(in.in(0, 8)));
  H5Fclose(f);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  const std::string path = build_stack(in);
  try {
    cubesolve::read_mintpy_stack(path);
  } catch (const cubesolve::Error&) {
  }
  try {
    if (cubesolve::is_mintpy_maps(path)) {
      std::vector<std::string> names, units;
      cubesolve::StackInfo info;
      cubesolve::read_mintpy_maps(path, &names, &units, &info);
    }
  } catch (const cubesolve::Error&) {
  }
  cubesolve::InputOptions options;  // MintPy's reading rules, as fuzzed
  const std::uint8_t o = in.byte();
  options.stack.reference = o & 1;
  options.stack.zero_is_nodata = o & 2;
  options.stack.mask = o & 4 ? "connectComponent" : o & 8 ? "coherence" : "";
  static const char* const kWeights[] = {"no", "var", "fim", "coh"};
  options.stack.weight = kWeights[(o >> 4) & 3];
  if (o & 64) options.stack.ref_y = options.stack.ref_x = in.in(0, 6);
  if (o & 128) options.stack.ref_radius = in.in(0, 3);
  try {
    const cubesolve::Inputs inputs = cubesolve::open_inputs(path, {"sbas", "", ""}, "", options);
    cubesolve::Array w;
    inputs.rows(0, inputs.cube->shape()[1], &w);
  } catch (const cubesolve::Error&) {
  }
  return 0;
}
