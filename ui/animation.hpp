#pragma once
// Animations of a map's channels (the dates of a time series): an animated
// GIF through giflib, each frame in 256 colours of its own, or an MP4 video
// (H.264, else MPEG-4 part 2) through FFmpeg's libraries.

#include <QImage>

#include <iosfwd>
#include <string>
#include <vector>

namespace cubesolve::ui {

/// True when this build writes animated GIFs (giflib).
bool animation_support();

/// Writes `frames` to `out` as an animated GIF that loops, `fps` frames a
/// second (GIF counts in hundredths of a second). Frames of other sizes are
/// placed at the top left of the largest, on its background. Throws IoError
/// (naming `name`) when the stream fails, InputError without giflib.
void write_gif(std::ostream& out, const std::vector<QImage>& frames, double fps, const std::string& name);

/// True when this build writes MP4 videos (FFmpeg's libavformat).
bool video_support();

/// Writes `frames` to the file `file` as an MP4 video, `fps` frames a
/// second: H.264 (libx264) at constant quality where FFmpeg has it, else
/// MPEG-4 part 2; frames placed as write_gif() does, on a canvas of even
/// size. Throws IoError (naming `name`) when it cannot be written, InputError
/// without FFmpeg or an encoder.
void write_mp4(const std::string& file, const std::vector<QImage>& frames, double fps, const std::string& name);

}  // namespace cubesolve::ui
