#pragma once
// The engine's machine-dependent parameters: derived from the processor it
// runs on (cache sizes, vector width) unless `cubesolve-cli bench --tune`
// searched them on this machine and stored them in the user's cache folder,
// keyed by processor model, vector width and BLAS (FFTW's "wisdom"). Every
// front end (CLI, desktop, Python) solves with what tuning() returns. The
// parameters change only speed: every pixel's answer stays within the
// precision contract whatever they are.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cubesolve {

/// The parameters the engine's CPU paths read at run time.
struct Tuning {
  /// Bytes of cube values a chunk of pixels may hold (pixels x N doubles),
  /// so that a chunk stays in one core's cache while its paths run.
  std::size_t chunk_bytes = std::size_t{512} << 10;
  /// Smallest deletion system factored in float32 and refined in float64
  /// (smaller ones are factored in float64); above 512 none is.
  std::size_t mixed_min = 64;
  /// Where the processor has 512-bit vectors: whether the batched
  /// factorizations take sixteen float32 (eight float64) systems at a time
  /// instead of eight (four).
  bool wide = true;

  bool operator==(const Tuning& o) const {
    return chunk_bytes == o.chunk_bytes && mixed_min == o.mixed_min && wide == o.wide;
  }
  /// "chunk 512 KiB, float32 from 64 rows, 512-bit lanes".
  std::string describe() const;
};

/// What tells machines apart for stored parameters.
struct MachineKey {
  std::string cpu;         // the processor's model name
  int vector_bits = 128;   // widest vectors the engine's code uses here: 512, 256 or 128
  std::string blas;        // the BLAS library and its configuration
  std::size_t l2_bytes = 0;  // per-core L2 (0: not known)
  /// "cpu | vector bits | blas": one line of the stored file.
  std::string text() const;
};

/// This machine's key. Never throws.
MachineKey machine_key();

/// The parameters derived from the machine alone (its caches and vectors).
Tuning machine_tuning(const MachineKey& key);

/// Where the parameters in use came from.
enum class TuningSource { Machine, Stored, Environment, Set };

struct TuningState {
  Tuning tuning;
  TuningSource source = TuningSource::Machine;
  std::string where;   // the stored file, or the variable, that gave them
  std::string detail;  // "L2 512 KiB, 256-bit vectors", or the stored line's date
  /// Problems met on the way (a malformed stored file): shown, never fatal.
  std::vector<std::string> warnings;
  /// "stored by bench --tune in FILE (DATE)", "derived from this machine (…)".
  std::string origin() const;
};

/// The parameters solves use now: set_tuning()'s, else CUBESOLVE_TUNING's
/// (e.g. "chunk_kib=256,mixed_min=96,wide=0"), else those stored for this
/// machine in tuning_file(), else machine_tuning(). Read once; thread-safe.
/// CUBESOLVE_TUNING=machine ignores the stored file.
TuningState tuning_state();
Tuning tuning();

/// Replaces the parameters for this process (bench --tune trying them,
/// tests); std::nullopt goes back to what the environment and the stored
/// file give, read again.
void set_tuning(std::optional<Tuning> t);

/// The stored parameters' file: $CUBESOLVE_TUNING_FILE, else tuning.txt
/// in the user's cache folder (cache_folder(): $XDG_CACHE_HOME/cubesolve,
/// ~/.cache/cubesolve).
std::string tuning_file();

/// The parameters stored in `path` for `key`, or nullopt (no file, no line
/// for this machine). A malformed line is skipped, its problem added to
/// `warnings`, naming the file and line. Never throws.
std::optional<Tuning> load_tuning(const std::string& path, const MachineKey& key, std::vector<std::string>* warnings,
                                  std::string* date = nullptr);

/// Writes `t` for `key` into `path`, keeping other machines' lines; the
/// folder is created where missing, the file replaced whole or not at all.
/// Throws IoError naming the file.
void store_tuning(const std::string& path, const MachineKey& key, const Tuning& t, const std::string& date);

/// Parses "chunk_kib=256,mixed_min=96,wide=0" (commas or tabs; any subset,
/// the rest from `base`). Throws InputError naming the field and the value.
Tuning parse_tuning(const std::string& text, Tuning base);

}  // namespace cubesolve
