#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

extern "C" char* openblas_get_config() __attribute__((weak));

namespace cubesolve {

namespace {

constexpr std::size_t kKiB = 1024;

std::string clean(std::string s) {  // one line, no tabs, trimmed
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r' || c == '|'; }, ' ');
  const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

/// The first "name : value" line of /proc/cpuinfo whose name is one of `names`.
std::string cpuinfo(std::initializer_list<const char*> names) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = clean(line.substr(0, colon));
    for (const char* n : names)
      if (name == n) return clean(line.substr(colon + 1));
  }
  return {};
}

/// cpu0's L2 (data or unified), from sysfs; 0 if unknown.
std::size_t sysfs_l2() {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), type(dir + "type"), size(dir + "size");
    int l = 0;
    std::string t, s;
    if (!(lv >> l) || !(type >> t) || !(size >> s)) continue;
    if (l != 2 || t == "Instruction") continue;
    const std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
    return s.back() == 'K' ? v * kKiB : s.back() == 'M' ? v * kKiB * kKiB : v;
  }
  return 0;
}

int vector_bits() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (__builtin_cpu_supports("x86-64-v4")) return 512;
  if (__builtin_cpu_supports("x86-64-v3")) return 256;
#endif
  return 128;
}

std::string blas_name() {
  if (openblas_get_config) {
    const char* c = openblas_get_config();
    if (c) return clean(std::string(c).rfind("OpenBLAS", 0) == 0 ? c : std::string("OpenBLAS ") + c);
  }
  return "BLAS (not OpenBLAS)";
}

std::size_t field_value(const std::string& name, const std::string& value, std::size_t lo, std::size_t hi) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || value[0] == '-' || v < lo || v > hi)
    throw InputError("tuning: expected " + name + " an integer from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", found '" + value + "'");
  return static_cast<std::size_t>(v);
}

struct Current {
  std::mutex mutex;
  std::optional<TuningState> read;  // what the environment and the stored file give, read once
  std::optional<Tuning> set;
};

Current& current() {
  static Current c;
  return c;
}

TuningState read_state() {
  TuningState s;
  const MachineKey key = machine_key();
  s.tuning = machine_tuning(key);
  std::ostringstream d;
  d << "L2 " << key.l2_bytes / kKiB << " KiB, " << key.vector_bits << "-bit vectors";
  s.detail = d.str();
  const char* env = std::getenv("CUBESOLVE_TUNING");
  const std::string e = env ? env : "";
  if (!e.empty() && e != "machine") {
    try {
      s.tuning = parse_tuning(e, s.tuning);
      s.source = TuningSource::Environment;
      s.where = "CUBESOLVE_TUNING";
      return s;
    } catch (const InputError& err) {
      s.warnings.push_back(std::string("CUBESOLVE_TUNING ignored: ") + err.what());
    }
  }
  if (e == "machine") return s;
  const std::string file = tuning_file();
  std::string date;
  if (const auto t = load_tuning(file, key, &s.warnings, &date)) {
    s.tuning = *t;
    s.source = TuningSource::Stored;
    s.where = file;
    s.detail = date;
  }
  return s;
}

}  // namespace

std::string Tuning::describe() const {
  std::ostringstream o;
  o << "chunk " << chunk_bytes / kKiB << " KiB, float32 deletions from ";
  if (mixed_min > 512) o << "none";
  else o << mixed_min << " rows";
  o << ", " << (wide ? "512-bit lanes where the processor has them" : "256-bit lanes");
  return o.str();
}

std::string MachineKey::text() const { return cpu + " | " + std::to_string(vector_bits) + "-bit | " + blas; }

MachineKey machine_key() {
  MachineKey k;
  k.cpu = cpuinfo({"model name"});
  if (k.cpu.empty()) {  // ARM: the implementer and part numbers
    const std::string impl = cpuinfo({"CPU implementer"}), part = cpuinfo({"CPU part"});
    k.cpu = impl.empty() ? "unknown processor" : "CPU implementer " + impl + " part " + part;
  }
  k.vector_bits = vector_bits();
  k.blas = blas_name();
  long l2 = 0;
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  k.l2_bytes = l2 > 0 ? static_cast<std::size_t>(l2) : sysfs_l2();
  return k;
}

Tuning machine_tuning(const MachineKey& key) {
  Tuning t;
  // Half of a core's L2 for the chunk's values: the rest holds the paths'
  // own workspace (systems, right-hand sides) and the design's factors.
  if (key.l2_bytes > 0) t.chunk_bytes = std::clamp<std::size_t>(key.l2_bytes / 2, 128 * kKiB, 4096 * kKiB);
  t.wide = key.vector_bits >= 512;
  return t;
}

std::string TuningState::origin() const {
  switch (source) {
  case TuningSource::Stored: return "stored by bench --tune in " + where + (detail.empty() ? "" : " (" + detail + ")");
  case TuningSource::Environment: return "set by " + where;
  case TuningSource::Set: return "set in this process";
  case TuningSource::Machine: break;
  }
  return "derived from this machine (" + detail + ")";
}

TuningState tuning_state() {
  Current& c = current();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.read) c.read = read_state();
  TuningState s = *c.read;
  if (c.set) {
    s.tuning = *c.set;
    s.source = TuningSource::Set;
  }
  return s;
}

Tuning tuning() {
  Current& c = current();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.set) return *c.set;
  if (!c.read) c.read = read_state();
  return c.read->tuning;
}

void set_tuning(std::optional<Tuning> t) {
  Current& c = current();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.set = t;
  if (!t) c.read.reset();  // read the environment and the stored file again
}

std::string tuning_file() {
  if (const char* f = std::getenv("CUBESOLVE_TUNING_FILE"); f && *f) return f;
  return cache_folder() + "/tuning.txt";
}

Tuning parse_tuning(const std::string& text, Tuning t) {
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, text.find('\t') != std::string::npos ? '\t' : ',')) {
    item = clean(item);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (name == "chunk_kib") t.chunk_bytes = field_value(name, value, 16, 65536) * kKiB;
    else if (name == "mixed_min") t.mixed_min = field_value(name, value, 1, 513);
    else if (name == "wide") t.wide = field_value(name, value, 0, 1) == 1;
    else if (name != "date")
      throw InputError("tuning: expected chunk_kib, mixed_min or wide, found '" + name + "'");
  }
  return t;
}

std::optional<Tuning> load_tuning(const std::string& path, const MachineKey& key, std::vector<std::string>* warnings,
                                  std::string* date) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const std::string want = key.text();
  std::string line;
  std::optional<Tuning> found;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto tab = line.find('\t');
    if (line.empty() || line[0] == '#' || line.substr(0, tab) != want) continue;
    try {
      found = parse_tuning(tab == std::string::npos ? "" : line.substr(tab + 1), machine_tuning(key));
      const auto d = line.find("date=");
      if (date) *date = d == std::string::npos ? "" : clean(line.substr(d + 5, line.find('\t', d) - d - 5));
    } catch (const InputError& e) {
      if (warnings) warnings->push_back(path + ":" + std::to_string(number) + ": ignored: " + e.what());
    }
  }
  return found;
}

void store_tuning(const std::string& path, const MachineKey& key, const Tuning& t, const std::string& date) {
  std::vector<std::string> kept;
  {
    std::ifstream in(path);
    std::string line;
    const std::string want = key.text();
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#' && line.substr(0, line.find('\t')) != want) kept.push_back(line);
  }
  std::error_code ec;
  const auto folder = std::filesystem::path(path).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder, ec);
  if (ec) throw IoError(path + ": cannot create its folder: " + ec.message());
  AtomicFile file(path);
  auto& out = file.stream();
  out << "# CubeSolve engine parameters, written by `cubesolve-cli bench --tune`: one line per machine\n"
      << "# (processor | vector width | BLAS), then its parameters. Delete a line to go back to the defaults.\n";
  for (const auto& l : kept) out << l << "\n";
  out << key.text() << "\tchunk_kib=" << t.chunk_bytes / kKiB << "\tmixed_min=" << t.mixed_min
      << "\twide=" << (t.wide ? 1 : 0) << "\tdate=" << clean(date) << "\n";
  file.close();
  file.commit();
  Current& c = current();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.read.reset();  // read again: the stored line now applies
}

}  // namespace cubesolve
