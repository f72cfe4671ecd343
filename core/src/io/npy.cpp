// NumPy .npy reader and writer (format description: numpy.lib.format).
#include <cubesolve/error.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/stream.hpp>

#include "io/sizes.hpp"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .npy code assumes a little-endian host");

namespace cubesolve {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct Header {
  char order = '<';  // '<', '>' or '|'
  char kind = 'f';   // 'f', 'i', 'u', 'b'
  std::size_t itemsize = 0;
  std::string descr;
  bool fortran = false;
  Shape shape;
  std::size_t data_offset = 0;
};

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

// Value of `key` in the header dict, as raw text up to the next top-level ',' or '}'.
std::string dict_value(const std::string& dict, const std::string& key, const std::string& path) {
  std::size_t k = dict.find("'" + key + "'");
  if (k == std::string::npos) k = dict.find("\"" + key + "\"");
  if (k == std::string::npos) bad(path, "expected a .npy header with the key '" + key + "', found: " + dict);
  std::size_t colon = dict.find(':', k);
  if (colon == std::string::npos) bad(path, "malformed .npy header: " + dict);
  std::size_t i = colon + 1, depth = 0;
  std::string out;
  for (; i < dict.size(); ++i) {
    char c = dict[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (depth == 0 && (c == ',' || c == '}')) break;
    out += c;
  }
  if (i < dict.size() && dict[i] == ')') out += ')';
  const auto b = out.find_first_not_of(" \t");
  const auto e = out.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : out.substr(b, e - b + 1);
}

Header parse_header(const std::string& dict, const std::string& path) {
  Header h;
  std::string descr = dict_value(dict, "descr", path);
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    bad(path, "expected a simple dtype such as '<f4' or '<f8', found descr " + descr);
  descr = descr.substr(1, descr.size() - 2);
  h.descr = descr;
  std::size_t p = 0;
  if (!descr.empty() && std::strchr("<>|=", descr[0])) h.order = descr[p++];
  if (h.order == '=') h.order = '<';
  if (p >= descr.size()) bad(path, "expected a dtype such as '<f4', found '" + descr + "'");
  h.kind = descr[p++];
  char* end = nullptr;
  const long size = std::strtol(descr.c_str() + p, &end, 10);
  const bool ok_kind = (h.kind == 'f' && (size == 4 || size == 8)) ||
                       ((h.kind == 'i' || h.kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                       (h.kind == 'b' && size == 1);
  if (!ok_kind || *end != '\0')
    bad(path, "expected float32, float64, integer or bool data, found dtype '" + descr + "'");
  h.itemsize = static_cast<std::size_t>(size);

  const std::string fortran = dict_value(dict, "fortran_order", path);
  if (fortran == "True") h.fortran = true;
  else if (fortran != "False") bad(path, "expected fortran_order True or False, found " + fortran);

  const std::string shape = dict_value(dict, "shape", path);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    bad(path, "expected a shape tuple, found " + shape);
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    const auto e = item.find_last_not_of(" \tL");
    const std::string digits = item.substr(b, e - b + 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
      bad(path, "expected non-negative integer dimensions, found shape " + shape);
    std::size_t d = 0;
    for (char c : digits) {
      if (d > (std::numeric_limits<std::size_t>::max() - 9) / 10)
        bad(path, "expected dimensions that fit in 64 bits, found shape " + shape);
      d = d * 10 + static_cast<std::size_t>(c - '0');
    }
    h.shape.push_back(d);
  }
  return h;
}

template <class T> T load(const unsigned char* p, bool swap) {
  unsigned char b[sizeof(T)];
  if (swap) std::reverse_copy(p, p + sizeof(T), b);
  else std::memcpy(b, p, sizeof(T));
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

double load_value(const unsigned char* p, const Header& h, bool swap) {
  switch (h.kind) {
    case 'f': return h.itemsize == 4 ? load<float>(p, swap) : load<double>(p, swap);
    case 'b': return *p ? 1.0 : 0.0;
    case 'i':
      switch (h.itemsize) {
        case 1: return static_cast<double>(load<std::int8_t>(p, swap));
        case 2: return static_cast<double>(load<std::int16_t>(p, swap));
        case 4: return static_cast<double>(load<std::int32_t>(p, swap));
        default: return static_cast<double>(load<std::int64_t>(p, swap));
      }
    default:
      switch (h.itemsize) {
        case 1: return static_cast<double>(load<std::uint8_t>(p, swap));
        case 2: return static_cast<double>(load<std::uint16_t>(p, swap));
        case 4: return static_cast<double>(load<std::uint32_t>(p, swap));
        default: return static_cast<double>(load<std::uint64_t>(p, swap));
      }
  }
}


/// Opens `path` and reads its header; `in` is left at the first data byte.
Header open_npy(std::ifstream& in, const std::string& path) {
  detail::check_not_folder(path);
  in.open(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open for reading: " + std::strerror(errno));

  unsigned char pre[10] = {};
  in.read(reinterpret_cast<char*>(pre), 8);
  if (in.gcount() < 8 || std::memcmp(pre, kMagic, 6) != 0) {
    // Say what the file starts with, in readable characters.
    std::string start;
    for (std::streamsize i = 0; i < in.gcount(); ++i) start += std::isprint(pre[i]) ? static_cast<char>(pre[i]) : '.';
    bad(path, in.gcount() == 0 ? "expected a NumPy .npy file, found an empty file"
                               : "expected a NumPy .npy file (it starts with the byte 0x93 and NUMPY), found a file starting with \"" +
                                     start + "\"");
  }
  const int major = pre[6];
  std::size_t header_len = 0;
  if (major == 1) {
    in.read(reinterpret_cast<char*>(pre + 8), 2);
    if (in.gcount() < 2) bad(path, "truncated .npy header");
    header_len = pre[8] | (pre[9] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    in.read(reinterpret_cast<char*>(len), 4);
    if (in.gcount() < 4) bad(path, "truncated .npy header");
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<std::size_t>(len[3]) << 24);
  } else {
    bad(path, "expected .npy format version 1, 2 or 3, found version " + std::to_string(major) + "." +
                  std::to_string(pre[7]));
  }
  if (header_len > (1u << 24)) bad(path, "expected a .npy header of reasonable length, found " + std::to_string(header_len) + " bytes");
  std::string dict(header_len, '\0');
  in.read(dict.data(), static_cast<std::streamsize>(header_len));
  if (static_cast<std::size_t>(in.gcount()) < header_len)
    bad(path, "truncated .npy header: expected " + std::to_string(header_len) + " bytes, found " +
                  std::to_string(in.gcount()));
  Header h = parse_header(dict, path);
  h.data_offset = static_cast<std::size_t>(in.tellg());
  // What the header claims, checked against the file before anything is allocated.
  detail::check_file_holds(path, h.data_offset, detail::data_bytes(h.shape, h.itemsize, path),
                           "data for shape " + shape_string(h.shape) + " of '" + h.descr + "'");
  return h;
}

DType output_dtype(const Header& h) { return (h.kind == 'f' && h.itemsize == 4) ? DType::Float32 : DType::Float64; }

// Stores element `v` (raw bytes p of the file's type) at out[at].
inline void put(const unsigned char* p, const Header& h, bool swap, float* f32, double* f64, std::size_t at) {
  if (f32) f32[at] = load<float>(p, swap);
  else f64[at] = load_value(p, h, swap);
}

}  // namespace

Array read_npy(const std::string& path) {
  std::ifstream in;
  const Header h = open_npy(in, path);
  const DType dtype = output_dtype(h);
  Array out(dtype, h.shape);
  const std::size_t total = out.size();
  const bool swap = h.order == '>' && h.itemsize > 1;

  // C-order strides of the destination, to place Fortran-ordered elements.
  const std::size_t nd = h.shape.size();
  std::vector<std::size_t> stride(nd, 1), index(nd, 0);
  for (std::size_t d = nd; d-- > 1;) stride[d - 1] = stride[d] * h.shape[d];
  std::size_t dest = 0;

  constexpr std::size_t kChunk = 1 << 16;
  std::vector<unsigned char> buf(kChunk * h.itemsize);
  float* f32 = dtype == DType::Float32 ? out.data<float>() : nullptr;
  double* f64 = dtype == DType::Float64 ? out.data<double>() : nullptr;
  for (std::size_t done = 0; done < total;) {
    const std::size_t count = std::min(kChunk, total - done);
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(count * h.itemsize));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got < count * h.itemsize)
      bad(path, "truncated data: expected " + std::to_string(total * h.itemsize) + " bytes for shape " +
                    shape_string(h.shape) + " of '" + h.descr + "', found " +
                    std::to_string(done * h.itemsize + got));
    for (std::size_t k = 0; k < count; ++k) {
      const unsigned char* p = buf.data() + k * h.itemsize;
      std::size_t at = done + k;
      if (h.fortran) {
        at = dest;
        for (std::size_t d = 0; d < nd; ++d) {  // advance the Fortran-order multi-index
          dest += stride[d];
          if (++index[d] < h.shape[d]) break;
          dest -= stride[d] * h.shape[d];
          index[d] = 0;
        }
      }
      put(p, h, swap, f32, f64, at);
    }
    done += count;
  }
  return out;
}

Array map_npy(const std::string& path) {
  std::ifstream in;
  const Header h = open_npy(in, path);
  in.close();
  if (h.fortran || h.order == '>' || h.kind != 'f' || (h.itemsize != 4 && h.itemsize != 8) || shape_size(h.shape) == 0) return {};
  const std::size_t length = h.data_offset + shape_size(h.shape) * h.itemsize;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);  // (the mapping keeps the file)
  if (base == MAP_FAILED) throw IoError(path + ": cannot map the file: " + std::strerror(errno));
  std::shared_ptr<void> owner(base, [length](void* p) { ::munmap(p, length); });
  return Array::borrow(h.itemsize == 4 ? DType::Float32 : DType::Float64, h.shape, static_cast<char*>(base) + h.data_offset,
                       std::move(owner));
}

namespace {

void write_npy_header(std::ostream& out, DType dtype, const Shape& shape) {
  const char* descr = "<f8";
  switch (dtype) {
    case DType::Float32: descr = "<f4"; break;
    case DType::Float64: descr = "<f8"; break;
    case DType::Int32: descr = "<i4"; break;
    case DType::UInt8: descr = "|u1"; break;
  }
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                     shape_string(shape) + ", }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  const std::size_t len = dict.size();
  const char pre[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(len & 0xff),
                        static_cast<char>(len >> 8)};
  out.write(pre, 10);
  out.write(dict.data(), static_cast<std::streamsize>(len));
}

class NpyReader : public CubeReader {
public:
  NpyReader(const std::string& path, bool plane_as_band) : path_(path) {
    h_ = open_npy(in_, path);
    if (plane_as_band && h_.shape.size() == 2) h_.shape.insert(h_.shape.begin(), 1);  // (H, W) is (1, H, W)
    shape_ = h_.shape;
    dtype_ = output_dtype(h_);
    advice_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // (-1: no advice given)
  }
  ~NpyReader() override {
    if (advice_ >= 0) ::close(advice_);
  }
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;

  Array rows(std::size_t r0, std::size_t r1) override {
    const std::size_t N = shape_[0], H = shape_[1], W = shape_[2], R = r1 - r0, isz = h_.itemsize;
    Array out = Array::uninitialized(dtype_, {N, R, W});  // (every value is read into it, or it is thrown away)
    if (out.empty()) return out;  // nothing to read (a run per column of nothing would still seek)
    float* f32 = dtype_ == DType::Float32 ? out.data<float>() : nullptr;
    double* f64 = dtype_ == DType::Float64 ? out.data<double>() : nullptr;
    const bool swap = h_.order == '>' && isz > 1;
    // C order: each band's rows are one run. Fortran order: each column's
    // rows of all bands are one run (the band index varies fastest).
    const std::size_t runs = h_.fortran ? W : N, run = h_.fortran ? N * R : R * W;
    std::vector<unsigned char> buf(run * isz);
    // Every run asked of the system at once, so that a file not in the page
    // cache is read with as many requests in flight as it has bands (read
    // run by run, the bands' interleaved runs defeat the system's read-ahead).
    for (std::size_t q = 0; q < runs && advice_ >= 0 && !h_.fortran; ++q)
      ::posix_fadvise(advice_, static_cast<off_t>(h_.data_offset + (q * H * W + r0 * W) * isz), static_cast<off_t>(run * isz),
                      POSIX_FADV_WILLNEED);
    for (std::size_t q = 0; q < runs; ++q) {
      const std::size_t first = h_.fortran ? N * (r0 + H * q) : q * H * W + r0 * W;
      in_.clear();
      in_.seekg(static_cast<std::streamoff>(h_.data_offset + first * isz));
      in_.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
      if (static_cast<std::size_t>(in_.gcount()) < buf.size())
        bad(path_, "truncated data: expected " + std::to_string(shape_size(shape_) * isz) + " bytes for shape " +
                       shape_string(shape_) + ", found fewer");
      for (std::size_t k = 0; k < run; ++k) {
        const std::size_t at = h_.fortran ? ((k % N) * R + k / N) * W + q : q * R * W + k;
        put(buf.data() + k * isz, h_, swap, f32, f64, at);
      }
    }
    return out;
  }

private:
  std::string path_;
  std::ifstream in_;
  Header h_;
  int advice_ = -1;  // the file, for read advice
};

class NpyWriter : public CubeWriter {
public:
  NpyWriter(const std::string& path, DType dtype, const Shape& shape, const Shape& header_shape, const std::string& name,
            bool attach)
      : path_(name.empty() ? path : name), dtype_(dtype), shape_(shape) {
    const auto mode = std::ios::binary | std::ios::in | std::ios::out;
    out_.open(path, attach ? mode : mode | std::ios::trunc);
    if (!out_) throw IoError(path_ + ": cannot open for writing: " + std::strerror(errno));
    std::ostringstream header;
    write_npy_header(header, dtype, header_shape.empty() ? shape : header_shape);
    if (!attach) out_ << header.str();
    data_offset_ = header.str().size();
  }

  void rows(std::size_t r0, const Array& block) override {
    const std::size_t B = shape_[0], H = shape_[1], W = shape_[2], R = block.dim(1), isz = dtype_size(dtype_);
    if (block.dtype() != dtype_ || block.dim(0) != B || block.dim(2) != W || r0 + R > H)
      throw std::logic_error("block of another shape or type");
    for (std::size_t b = 0; b < B; ++b) {
      out_.seekp(static_cast<std::streamoff>(data_offset_ + (b * H * W + r0 * W) * isz));
      out_.write(static_cast<const char*>(block.raw()) + b * R * W * isz, static_cast<std::streamsize>(R * W * isz));
    }
    if (!out_) throw IoError(path_ + ": write failed (disk full?)");
  }

  void finish() override {
    out_.close();
    if (out_.fail()) throw IoError(path_ + ": write failed (disk full?)");
  }

private:
  std::string path_;  // as messages name it
  DType dtype_;
  Shape shape_;
  std::fstream out_;
  std::size_t data_offset_ = 0;
};

}  // namespace

std::unique_ptr<CubeReader> open_npy_cube(const std::string& path, bool plane_as_band) {
  return std::make_unique<NpyReader>(path, plane_as_band);
}

std::unique_ptr<CubeWriter> npy_writer(const std::string& path, DType dtype, const Shape& shape, const Shape& header_shape,
                                       const std::string& name, bool attach) {
  return std::make_unique<NpyWriter>(path, dtype, shape, header_shape, name, attach);
}

void write_npy(std::ostream& out, const Array& array) {
  write_npy_header(out, array.dtype(), array.shape());
  out.write(static_cast<const char*>(array.raw()), static_cast<std::streamsize>(array.nbytes()));
  if (!out) throw IoError("write failed");
}

}  // namespace cubesolve
