#include "animation.hpp"

#include <cubesolve/error.hpp>

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>

#ifdef CUBESOLVE_HAS_GIF
#include <gif_lib.h>
#endif

namespace cubesolve::ui {

#ifndef CUBESOLVE_HAS_GIF

bool animation_support() { return false; }

void write_gif(std::ostream&, const std::vector<QImage>&, double, const std::string& name) {
  throw InputError(name + ": expected an export this build writes (it was built without giflib: no GIF animations)");
}

#else

bool animation_support() { return true; }

namespace {

int write_bytes(GifFileType* gif, const GifByteType* data, int size) {
  auto* out = static_cast<std::ostream*>(gif->UserData);
  out->write(reinterpret_cast<const char*>(data), size);
  return *out ? size : 0;
}

/// One frame at (0, 0) of the screen, shown `delay` hundredths of a second,
/// in a palette of its own: its 256 most frequent colours exactly (a map's
/// colour table, the background, the text), any other colour (the edges of
/// anti-aliased text) as the nearest of them.
bool put_frame(GifFileType* gif, const QImage& frame, int delay) {
  const int W = frame.width(), H = frame.height();
  std::unordered_map<QRgb, std::size_t> count;
  for (int y = 0; y < H; ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(frame.constScanLine(y));
    for (int x = 0; x < W; ++x) ++count[line[x] | 0xff000000u];
  }
  std::vector<std::pair<QRgb, std::size_t>> colours(count.begin(), count.end());
  std::sort(colours.begin(), colours.end(), [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  colours.resize(std::min<std::size_t>(colours.size(), 256));
  GifColorType palette[256] = {};
  std::unordered_map<QRgb, GifByteType> index;
  for (std::size_t k = 0; k < colours.size(); ++k) {
    palette[k] = {static_cast<GifByteType>(qRed(colours[k].first)), static_cast<GifByteType>(qGreen(colours[k].first)),
                  static_cast<GifByteType>(qBlue(colours[k].first))};
    index[colours[k].first] = static_cast<GifByteType>(k);
  }
  auto nearest = [&](QRgb c) {
    int best = 0, best_d = 1 << 30;
    for (std::size_t k = 0; k < colours.size(); ++k) {
      const int dr = qRed(c) - palette[k].Red, dg = qGreen(c) - palette[k].Green, db = qBlue(c) - palette[k].Blue;
      if (dr * dr + dg * dg + db * db < best_d) best_d = dr * dr + dg * dg + db * db, best = static_cast<int>(k);
    }
    return index[c] = static_cast<GifByteType>(best);
  };
  std::vector<GifByteType> pixels(static_cast<std::size_t>(W) * static_cast<std::size_t>(H));
  for (int y = 0; y < H; ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(frame.constScanLine(y));
    for (int x = 0; x < W; ++x) {
      const QRgb c = line[x] | 0xff000000u;
      const auto at = index.find(c);
      pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(W) + static_cast<std::size_t>(x)] = at != index.end() ? at->second : nearest(c);
    }
  }
  GraphicsControlBlock gcb{};
  gcb.DisposalMode = DISPOSE_DO_NOT;
  gcb.DelayTime = delay;
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  GifByteType control[4];
  EGifGCBToExtension(&gcb, control);
  ColorMapObject* map = GifMakeMapObject(256, palette);
  bool ok = map && EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, control) == GIF_OK &&
            EGifPutImageDesc(gif, 0, 0, W, H, false, map) == GIF_OK;
  for (int y = 0; ok && y < H; ++y) ok = EGifPutLine(gif, pixels.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(W), W) == GIF_OK;
  GifFreeMapObject(map);
  return ok;
}

}  // namespace

void write_gif(std::ostream& out, const std::vector<QImage>& frames, double fps, const std::string& name) {
  if (frames.empty()) throw InputError(name + ": expected frames to animate, found none");
  int W = 0, H = 0;
  for (const QImage& f : frames) W = std::max(W, f.width()), H = std::max(H, f.height());
  int error = 0;
  GifFileType* gif = EGifOpen(&out, write_bytes, &error);
  if (!gif) throw IoError(name + ": cannot start the GIF: " + GifErrorString(error));
  EGifSetGifVersion(gif, true);
  bool ok = EGifPutScreenDesc(gif, W, H, 8, 0, nullptr) == GIF_OK;
  // Loop for ever (the Netscape application extension).
  const GifByteType loop[3] = {1, 0, 0};
  ok = ok && EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
       EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_OK && EGifPutExtensionBlock(gif, 3, loop) == GIF_OK &&
       EGifPutExtensionTrailer(gif) == GIF_OK;
  const int delay = std::max(2, static_cast<int>(std::lround(100 / fps)));
  for (const QImage& f : frames) {
    if (!ok) break;
    QImage frame(W, H, QImage::Format_RGB32);
    frame.fill(f.pixel(0, 0));
    QPainter(&frame).drawImage(0, 0, f);
    ok = put_frame(gif, frame, delay);
  }
  const int closed = EGifCloseFile(gif, &error);
  if (!ok || closed != GIF_OK || !out) throw IoError(name + ": cannot write the GIF animation");
}

#endif

}  // namespace cubesolve::ui
