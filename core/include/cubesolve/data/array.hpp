#pragma once
// A dense, C-ordered n-dimensional array of one element type. Cubes are
// (N, H, W): observation index first. Float cubes keep the type they were
// read with; the engine converts values to float64 as it reads them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cubesolve {

enum class DType : std::uint8_t { Float32, Float64, Int32, UInt8 };

/// "float32", "float64", "int32", "uint8".
const char* dtype_name(DType dtype);
std::size_t dtype_size(DType dtype);
/// Parses a name as printed by dtype_name(). Throws InputError naming `what`.
DType parse_dtype(const std::string& name, const std::string& what);

using Shape = std::vector<std::size_t>;

/// "(50, 500, 500)", the way NumPy prints shapes.
std::string shape_string(const Shape& shape);
/// Product of the dimensions (1 for a 0-d shape).
std::size_t shape_size(const Shape& shape);

class Array {
public:
  Array() = default;
  /// Zero-filled array. Throws InputError when the size overflows.
  Array(DType dtype, Shape shape);
  /// An array whose values are left unset, for outputs that are written in
  /// full (the memory is first touched by the threads that write it).
  /// Throws InputError when the size overflows.
  static Array uninitialized(DType dtype, Shape shape);
  /// An array over memory it does not own (a NumPy array's, say): C-ordered
  /// `data`, aligned for `dtype`, kept alive by `owner` while the array (or
  /// a move of it) lives. Copies of it own their memory. Throws InputError
  /// when the size overflows.
  static Array borrow(DType dtype, Shape shape, void* data, std::shared_ptr<void> owner);

  Array(const Array& other);
  Array& operator=(const Array& other);
  Array(Array&&) noexcept = default;
  Array& operator=(Array&&) noexcept = default;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::size_t ndim() const { return shape_.size(); }
  std::size_t dim(std::size_t i) const { return shape_.at(i); }
  std::size_t size() const { return size_; }
  std::size_t nbytes() const { return size_ * dtype_size(dtype_); }
  bool empty() const { return size_ == 0; }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  /// What keeps the memory alive: hold it to keep raw() valid beyond the array.
  const std::shared_ptr<void>& storage() const { return owner_; }

  /// Typed access; T must match dtype() (float, double, std::int32_t, std::uint8_t),
  /// otherwise std::logic_error.
  template <class T> T* data();
  template <class T> const T* data() const;

  /// Element i converted to double, whatever the dtype.
  double value(std::size_t i) const;
  /// Sets element i from a double, converted to the dtype.
  void set(std::size_t i, double v);

  /// Same data, new shape of the same size. Throws std::logic_error for
  /// another size (a programming error).
  void reshape(Shape shape);

private:
  void check(DType expected) const;

  DType dtype_ = DType::Float64;
  Shape shape_;
  std::size_t size_ = 0;
  std::size_t words_ = 0;        // 8-byte words of storage
  std::shared_ptr<void> owner_;  // the memory (8-byte aligned for any dtype), or what keeps borrowed memory alive
  void* data_ = nullptr;
};

// Inline: the engine's element-wise reads and writes call these per value.
inline double Array::value(std::size_t i) const {
  switch (dtype_) {
    case DType::Float32: return static_cast<const float*>(data_)[i];
    case DType::Float64: return static_cast<const double*>(data_)[i];
    case DType::Int32: return static_cast<const std::int32_t*>(data_)[i];
    case DType::UInt8: return static_cast<const std::uint8_t*>(data_)[i];
  }
  return 0;
}

inline void Array::set(std::size_t i, double v) {
  switch (dtype_) {
    case DType::Float32: static_cast<float*>(data_)[i] = static_cast<float>(v); return;
    case DType::Float64: static_cast<double*>(data_)[i] = v; return;
    case DType::Int32: static_cast<std::int32_t*>(data_)[i] = static_cast<std::int32_t>(v); return;
    case DType::UInt8: static_cast<std::uint8_t*>(data_)[i] = static_cast<std::uint8_t>(v); return;
  }
}

/// Throws InputError "NAME: expected the cube's shape (N, H, W), found ..."
/// unless `shape` is `cube`.
void check_like_cube(const Shape& shape, const Shape& cube, const std::string& name);

/// Plane `index` (< B) of an array (B, H, W), or the array (H, W) itself for
/// index 0, as H * W doubles. Never throws but for memory.
std::vector<double> plane(const Array& a, std::size_t index = 0);

/// Some pixels of a cube (N, H, W) as a cube (N, 1, K) of the same dtype:
/// pixel k of the result is pixel pixels[k] (an index into H * W). Never
/// throws but for memory.
Array take_pixels(const Array& cube, const std::vector<std::size_t>& pixels);

/// Rows [r0, r1) of `whole`, (B, H, W) or (H, W), as (B, r1 - r0, W) or
/// (r1 - r0, W) of the same dtype. Throws InputError for rows beyond it.
Array take_rows(const Array& whole, std::size_t r0, std::size_t r1);
/// Copies `block` (B, rows, W) into rows [r0, r0 + rows) of `whole` (B, H, W)
/// of the same dtype (or (rows, W) into (H, W)). Throws InputError for a
/// block that does not fit.
void put_rows(Array& whole, std::size_t r0, const Array& block);

template <> float* Array::data<float>();
template <> double* Array::data<double>();
template <> std::int32_t* Array::data<std::int32_t>();
template <> std::uint8_t* Array::data<std::uint8_t>();
template <> const float* Array::data<float>() const;
template <> const double* Array::data<double>() const;
template <> const std::int32_t* Array::data<std::int32_t>() const;
template <> const std::uint8_t* Array::data<std::uint8_t>() const;

}  // namespace cubesolve
