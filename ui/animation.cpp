#include "animation.hpp"

#include <cubesolve/error.hpp>

#include <QPainter>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cmath>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>

#ifdef CUBESOLVE_HAS_GIF
#include <gif_lib.h>
#endif

#ifdef CUBESOLVE_HAS_AV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}
#endif

namespace cubesolve::ui {

namespace {
/// A frame at the top left of a canvas of W x H, on the colour of its corner.
[[maybe_unused]] QImage placed(const QImage& f, int W, int H) {
  QImage frame(W, H, QImage::Format_RGB32);
  frame.fill(f.pixel(0, 0));
  QPainter(&frame).drawImage(0, 0, f);
  return frame;
}
}  // namespace

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
    ok = put_frame(gif, placed(f, W, H), delay);
  }
  const int closed = EGifCloseFile(gif, &error);
  if (!ok || closed != GIF_OK || !out) throw IoError(name + ": cannot write the GIF animation");
}

#endif

#ifndef CUBESOLVE_HAS_AV

bool video_support() { return false; }

void write_mp4(const std::string&, const std::vector<QImage>&, double, const std::string& name) {
  throw InputError(name + ": expected an export this build writes (it was built without FFmpeg: no MP4 videos)");
}

#else

bool video_support() { return true; }

namespace {

/// Everything FFmpeg allocates for one video, freed however it ends, and
/// the one way its failures are reported.
struct Video {
  std::string name;
  AVFormatContext* format = nullptr;
  AVCodecContext* context = nullptr;
  AVStream* stream = nullptr;
  AVFrame* picture = nullptr;
  AVPacket* packet = nullptr;
  SwsContext* convert = nullptr;
  ~Video() {
    sws_freeContext(convert);
    av_packet_free(&packet);
    av_frame_free(&picture);
    avcodec_free_context(&context);
    if (format && format->pb) avio_closep(&format->pb);
    avformat_free_context(format);
  }
  void check(int error, const char* what) const {
    if (error >= 0) return;
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(error, text, sizeof text);
    throw IoError(name + ": cannot write the MP4 video (" + what + ": " + text + ")");
  }
  /// The container at `file`, one stream of `codec` at W x H, its header written.
  void open(const std::string& file, const AVCodec* codec, int W, int H, double fps) {
    check(avformat_alloc_output_context2(&format, nullptr, "mp4", file.c_str()), "container");
    stream = avformat_new_stream(format, nullptr);
    context = avcodec_alloc_context3(codec);
    if (!stream || !context) check(AVERROR(ENOMEM), "encoder");
    context->width = W;
    context->height = H;
    context->pix_fmt = AV_PIX_FMT_YUV420P;
    context->time_base = AVRational{1, 1000};  // milliseconds: any rate of playback
    context->framerate = av_d2q(fps, 1000);
    context->gop_size = 12;
    if (codec->id == AV_CODEC_ID_H264) {
      av_opt_set(context->priv_data, "crf", "18", 0);  // visually lossless
      av_opt_set(context->priv_data, "preset", "medium", 0);
    } else {
      context->flags |= AV_CODEC_FLAG_QSCALE;
      context->global_quality = FF_QP2LAMBDA * 2;
    }
    if (format->oformat->flags & AVFMT_GLOBALHEADER) context->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    check(avcodec_open2(context, codec, nullptr), "encoder");
    check(avcodec_parameters_from_context(stream->codecpar, context), "stream");
    stream->time_base = context->time_base;
    check(avio_open(&format->pb, file.c_str(), AVIO_FLAG_WRITE), "file");
    check(avformat_write_header(format, nullptr), "header");
    convert = sws_getContext(W, H, AV_PIX_FMT_RGB32, W, H, AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr, nullptr, nullptr);
    picture = av_frame_alloc();
    packet = av_packet_alloc();
    if (!convert || !picture || !packet) check(AVERROR(ENOMEM), "frames");
    picture->format = AV_PIX_FMT_YUV420P;
    picture->width = W;
    picture->height = H;
    check(av_frame_get_buffer(picture, 0), "frames");
  }
  /// Encodes `frame` (null: the encoder's last packets), each packet lasting `duration` ms.
  void encode(AVFrame* frame, std::int64_t duration) {
    check(avcodec_send_frame(context, frame), "encoding");
    for (int got; (got = avcodec_receive_packet(context, packet)) != AVERROR(EAGAIN) && got != AVERROR_EOF;) {
      check(got, "encoding");
      packet->duration = duration;  // (the last frame's too: else players drop it)
      av_packet_rescale_ts(packet, context->time_base, stream->time_base);
      packet->stream_index = stream->index;
      check(av_interleaved_write_frame(format, packet), "writing");
    }
  }
};

}  // namespace

void write_mp4(const std::string& file, const std::vector<QImage>& frames, double fps, const std::string& name) {
  if (frames.empty()) throw InputError(name + ": expected frames to animate, found none");
  int W = 0, H = 0;
  for (const QImage& f : frames) W = std::max(W, f.width()), H = std::max(H, f.height());
  W += W % 2, H += H % 2;  // (4:2:0 chroma needs even sizes)
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec) codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
  if (!codec) throw InputError(name + ": expected an H.264 or MPEG-4 encoder in this build's FFmpeg, found none");
  av_log_set_level(AV_LOG_ERROR);  // (the encoders' statistics are not for the user)
  Video video{name};
  video.open(file, codec, W, H, fps);
  const std::int64_t duration = std::llround(1000 / fps);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const QImage frame = placed(frames[k], W, H);  // (QImage's RGB32 is FFmpeg's: 0xAARRGGBB, native order)
    video.check(av_frame_make_writable(video.picture), "frames");
    const std::uint8_t* from[1] = {frame.constBits()};
    const int stride[1] = {static_cast<int>(frame.bytesPerLine())};
    sws_scale(video.convert, from, stride, 0, H, video.picture->data, video.picture->linesize);
    video.picture->pts = std::llround(static_cast<double>(k) * 1000 / fps);
    video.encode(video.picture, duration);
  }
  video.encode(nullptr, duration);
  video.check(av_write_trailer(video.format), "trailer");
}

#endif

}  // namespace cubesolve::ui
