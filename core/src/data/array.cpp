#include <cubesolve/data/array.hpp>
#include <cubesolve/error.hpp>

#include "data/pages.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace cubesolve {

namespace {
constexpr std::size_t kMappedArray = std::size_t{8} << 20;  // at most a quarter lost to the last page
}  // namespace

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::UInt8: return "uint8";
  }
  return "?";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::UInt8: return 1;
  }
  return 0;
}

DType parse_dtype(const std::string& name, const std::string& what) {
  for (DType d : {DType::Float32, DType::Float64})
    if (name == dtype_name(d)) return d;
  throw InputError(what + ": expected float32 or float64, found '" + name + "'");
}

std::string shape_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::size_t shape_size(const Shape& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) {
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d)
      throw InputError("array shape " + shape_string(shape) + " is too large");
    n *= d;
  }
  return n;
}

Array Array::uninitialized(DType dtype, Shape shape) {
  Array a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.size_ = shape_size(a.shape_);
  if (a.size_ > std::numeric_limits<std::size_t>::max() / 8)
    throw InputError("array shape " + shape_string(a.shape_) + " is too large");
  a.words_ = (a.size_ * dtype_size(dtype) + 7) / 8;
  // Untouched memory. A large block on huge pages: a solve's outputs are
  // written once, and faulting them in 4 KiB at a time cost it more than
  // the writing (a cube read at scattered rows gains too).
  const std::size_t bytes = a.words_ * 8;
  if (bytes >= kMappedArray && detail::mappable(bytes))
    a.owner_ = std::shared_ptr<void>(detail::map_pages(bytes), [bytes](void* p) { detail::unmap_pages(p, bytes); });
  else
    a.owner_ = std::shared_ptr<double[]>(new double[std::max<std::size_t>(1, a.words_)]);
  a.data_ = a.owner_.get();
  return a;
}

Array Array::borrow(DType dtype, Shape shape, void* data, std::shared_ptr<void> owner) {
  Array a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.size_ = shape_size(a.shape_);
  a.words_ = (a.size_ * dtype_size(dtype) + 7) / 8;
  a.owner_ = std::move(owner);
  a.data_ = data;
  return a;
}

Array::Array(DType dtype, Shape shape) : Array(uninitialized(dtype, std::move(shape))) {
  std::fill(static_cast<double*>(data_), static_cast<double*>(data_) + words_, 0.0);
}

Array::Array(const Array& other) : Array(uninitialized(other.dtype_, other.shape_)) {
  if (other.nbytes()) std::memcpy(data_, other.data_, other.nbytes());
}

Array& Array::operator=(const Array& other) {
  if (this != &other) *this = Array(other);
  return *this;
}

void Array::check(DType expected) const {
  if (dtype_ != expected)
    throw std::logic_error(std::string("array holds ") + dtype_name(dtype_) + ", accessed as " +
                           dtype_name(expected));
}

#define CUBESOLVE_ARRAY_ACCESS(T, D)                                                  \
  template <> T* Array::data<T>() { check(D); return reinterpret_cast<T*>(raw()); }  \
  template <> const T* Array::data<T>() const {                                       \
    check(D);                                                                         \
    return reinterpret_cast<const T*>(raw());                                         \
  }
CUBESOLVE_ARRAY_ACCESS(float, DType::Float32)
CUBESOLVE_ARRAY_ACCESS(double, DType::Float64)
CUBESOLVE_ARRAY_ACCESS(std::int32_t, DType::Int32)
CUBESOLVE_ARRAY_ACCESS(std::uint8_t, DType::UInt8)
#undef CUBESOLVE_ARRAY_ACCESS

void Array::reshape(Shape shape) {
  if (shape_size(shape) != size_)
    throw std::logic_error("cannot reshape " + shape_string(shape_) + " to " + shape_string(shape));
  shape_ = std::move(shape);
}

void check_like_cube(const Shape& shape, const Shape& cube, const std::string& name) {
  if (shape != cube)
    throw InputError(name + ": expected the cube's shape " + shape_string(cube) + ", found " + shape_string(shape));
}

std::vector<double> plane(const Array& a, std::size_t index) {
  const std::size_t P = a.ndim() >= 2 ? a.dim(a.ndim() - 2) * a.dim(a.ndim() - 1) : a.size();
  std::vector<double> out(P);
  if (a.dtype() == DType::Float32) std::copy_n(a.data<float>() + index * P, P, out.begin());
  else if (a.dtype() == DType::Float64) std::copy_n(a.data<double>() + index * P, P, out.begin());
  else
    for (std::size_t p = 0; p < P; ++p) out[p] = a.value(index * P + p);
  return out;
}

Array take_pixels(const Array& cube, const std::vector<std::size_t>& pixels) {
  const std::size_t N = cube.dim(0), P = cube.dim(1) * cube.dim(2), K = pixels.size(), size = dtype_size(cube.dtype());
  Array sub(cube.dtype(), {N, 1, K});
  const auto* from = static_cast<const char*>(cube.raw());
  auto* to = static_cast<char*>(sub.raw());
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t k = 0; k < K; ++k) std::memcpy(to + (i * K + k) * size, from + (i * P + pixels[k]) * size, size);
  return sub;
}

void put_rows(Array& whole, std::size_t r0, const Array& block) {
  const bool plane = block.ndim() == 2;
  const std::size_t B = plane ? 1 : block.dim(0), R = block.dim(plane ? 0 : 1), W = block.dim(plane ? 1 : 2), e = dtype_size(block.dtype());
  const std::size_t H = whole.ndim() == block.ndim() ? whole.dim(plane ? 0 : 1) : 0;
  if (block.dtype() != whole.dtype() || H == 0 || (!plane && whole.dim(0) != B) || whole.dim(plane ? 1 : 2) != W || r0 + R > H)
    throw InputError("rows " + std::to_string(r0) + " to " + std::to_string(r0 + R) + ": expected a block within the array");
  for (std::size_t b = 0; b < B; ++b)
    std::memcpy(static_cast<char*>(whole.raw()) + (b * H + r0) * W * e, static_cast<const char*>(block.raw()) + b * R * W * e, R * W * e);
}

Array take_rows(const Array& whole, std::size_t r0, std::size_t r1) {
  const bool plane = whole.ndim() == 2;
  const std::size_t B = plane ? 1 : whole.dim(0), H = whole.dim(plane ? 0 : 1), W = whole.dim(plane ? 1 : 2), R = r1 - r0;
  const std::size_t e = dtype_size(whole.dtype());
  if (r0 > r1 || r1 > H) throw InputError("rows " + std::to_string(r0) + " to " + std::to_string(r1) + ": expected rows within the array");
  Array part = Array::uninitialized(whole.dtype(), plane ? Shape{R, W} : Shape{B, R, W});
  for (std::size_t b = 0; b < B; ++b)
    std::memcpy(static_cast<char*>(part.raw()) + b * R * W * e, static_cast<const char*>(whole.raw()) + (b * H + r0) * W * e, R * W * e);
  return part;
}

}  // namespace cubesolve
