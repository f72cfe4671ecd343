#pragma once
// Animations of a map's channels (the dates of a time series): an animated
// GIF through giflib, each frame in 256 colours of its own.

#include <QImage>

#include <iosfwd>
#include <vector>

namespace cubesolve::ui {

/// True when this build writes animated GIFs (giflib).
bool animation_support();

/// Writes `frames` to `out` as an animated GIF that loops, `fps` frames a
/// second (GIF counts in hundredths of a second). Frames of other sizes are
/// placed at the top left of the largest, on its background. Throws IoError
/// (naming `name`) when the stream fails, InputError without giflib.
void write_gif(std::ostream& out, const std::vector<QImage>& frames, double fps, const std::string& name);

}  // namespace cubesolve::ui
