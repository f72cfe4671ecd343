// A minimal PNG writer: 8-bit RGB, no filtering, deflate "stored" blocks.
// Larger files than zlib would make, but no dependency.
#include <cubesolve/error.hpp>
#include <cubesolve/image/image.hpp>

#include <array>
#include <ostream>

namespace cubesolve {
namespace {

std::uint32_t crc32(const std::uint8_t* data, std::size_t n, std::uint32_t crc = 0) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

void chunk(std::ostream& out, const char* type, const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> len, crc;
  put32(len, static_cast<std::uint32_t>(data.size()));
  const auto* t = reinterpret_cast<const std::uint8_t*>(type);
  put32(crc, crc32(data.data(), data.size(), crc32(t, 4)));
  out.write(reinterpret_cast<const char*>(len.data()), 4);
  out.write(type, 4);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  out.write(reinterpret_cast<const char*>(crc.data()), 4);
}

}  // namespace

void write_png(std::ostream& out, const Image& image) {
  static const std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  out.write(reinterpret_cast<const char*>(signature), 8);
  std::vector<std::uint8_t> ihdr;
  put32(ihdr, static_cast<std::uint32_t>(image.width));
  put32(ihdr, static_cast<std::uint32_t>(image.height));
  for (std::uint8_t b : {8, 2, 0, 0, 0}) ihdr.push_back(b);  // 8-bit, RGB, deflate, no filter, no interlace
  chunk(out, "IHDR", ihdr);

  // Raw scanlines, each led by filter byte 0.
  std::vector<std::uint8_t> raw;
  const std::size_t stride = image.width * 3;
  raw.reserve((stride + 1) * image.height);
  for (std::size_t r = 0; r < image.height; ++r) {
    raw.push_back(0);
    raw.insert(raw.end(), image.rgb.begin() + static_cast<std::ptrdiff_t>(r * stride),
               image.rgb.begin() + static_cast<std::ptrdiff_t>((r + 1) * stride));
  }
  std::vector<std::uint8_t> z = {0x78, 0x01};
  std::uint32_t a = 1, b = 0;  // Adler-32
  for (std::uint8_t v : raw) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  std::size_t pos = 0;
  do {
    const std::size_t len = std::min<std::size_t>(65535, raw.size() - pos);
    const bool last = pos + len == raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<std::uint8_t>(len & 0xff));
    z.push_back(static_cast<std::uint8_t>(len >> 8));
    z.push_back(static_cast<std::uint8_t>(~len & 0xff));
    z.push_back(static_cast<std::uint8_t>((~len >> 8) & 0xff));
    z.insert(z.end(), raw.begin() + static_cast<std::ptrdiff_t>(pos), raw.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
  } while (pos < raw.size());
  put32(z, (b << 16) | a);
  chunk(out, "IDAT", z);
  chunk(out, "IEND", std::vector<std::uint8_t>());
  if (!out) throw IoError("PNG write failed");
}

}  // namespace cubesolve
