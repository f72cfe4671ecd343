#include <cubesolve/data/designs.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace cubesolve {

namespace {

bool is_date(const std::string& s) {
  return s.size() == 8 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Calls each(line number, text) for every line of a text file that is not
// blank once its '#' comment is cut off.
void for_each_line(const std::string& path, const std::function<void(std::size_t, std::string)>& each) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
  std::string line;
  for (std::size_t no = 1; std::getline(in, line); ++no) {
    line = trim(line.substr(0, line.find('#')));
    if (!line.empty()) each(no, line);
  }
}

}  // namespace

std::vector<DatePair> read_pairs(const std::string& path) {
  std::vector<DatePair> pairs;
  for_each_line(path, [&](std::size_t no, std::string line) {
    std::replace(line.begin(), line.end(), '_', ' ');
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream ss(line);
    std::string a, b, extra;
    ss >> a >> b >> extra;
    if (!is_date(a) || !is_date(b) || !extra.empty())
      throw InputError(path + ": line " + std::to_string(no) + ": expected a pair YYYYMMDD_YYYYMMDD, found '" + line + "'");
    for (const std::string& d : {a, b})
      if (!is_calendar_date(d))
        throw InputError(path + ": line " + std::to_string(no) + ": expected calendar dates YYYYMMDD, found '" + d + "'");
    pairs.emplace_back(a, b);
  });
  if (pairs.empty()) throw InputError(path + ": expected interferogram pairs (YYYYMMDD_YYYYMMDD), found none");
  return pairs;
}

std::vector<std::string> pair_dates(const std::vector<DatePair>& pairs) {
  std::vector<std::string> dates;
  for (const auto& [a, b] : pairs) dates.insert(dates.end(), {a, b});
  std::sort(dates.begin(), dates.end());
  dates.erase(std::unique(dates.begin(), dates.end()), dates.end());
  return dates;
}

std::vector<std::string> pair_names(const std::vector<DatePair>& pairs) {
  std::vector<std::string> names;
  for (const auto& [a, b] : pairs) names.push_back(a + "_" + b);
  return names;
}

std::vector<std::string> unknown_names(const std::vector<DatePair>& pairs, const std::vector<std::string>& terms, std::size_t M) {
  if (!pairs.empty()) {
    const std::vector<std::string> dates = pair_dates(pairs);
    return dates.size() == M + 1 ? std::vector<std::string>(dates.begin() + 1, dates.end()) : std::vector<std::string>{};
  }
  return terms.size() == M ? terms : std::vector<std::string>{};
}

Array sbas_design(const std::vector<DatePair>& pairs, std::vector<std::string>* dates_out, const std::string& what) {
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto& [a, b] = pairs[k];
    if (!is_calendar_date(a) || !is_calendar_date(b))
      throw InputError(what + ": pair " + std::to_string(k) + ": expected calendar dates YYYYMMDD, found '" + a + "', '" + b + "'");
    if (a == b) throw InputError(what + ": pair " + std::to_string(k) + ": expected two different dates, found " + a + " twice");
  }
  const std::vector<std::string> dates = pair_dates(pairs);
  if (dates.size() < 2) throw InputError(what + ": expected at least two dates, found " + std::to_string(dates.size()));
  std::map<std::string, std::size_t> column;
  for (std::size_t d = 0; d < dates.size(); ++d) column[dates[d]] = d;  // column d-1; date 0 is the reference
  const std::size_t M = dates.size() - 1;
  Array A(DType::Float64, {pairs.size(), M});
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    // The interferogram measures phase(later) - phase(earlier).
    const bool forward = pairs[k].first < pairs[k].second;
    const std::size_t early = column[forward ? pairs[k].first : pairs[k].second];
    const std::size_t late = column[forward ? pairs[k].second : pairs[k].first];
    const double sign = forward ? 1.0 : -1.0;
    A.data<double>()[k * M + late - 1] = sign;
    if (early > 0) A.data<double>()[k * M + early - 1] = -sign;
  }
  if (dates_out) *dates_out = dates;
  return A;
}

Array sbas_velocity_design(const std::vector<DatePair>& pairs, std::vector<double>* intervals, const std::string& what) {
  std::vector<std::string> dates;
  const Array A = sbas_design(pairs, &dates, what);  // the checks, and the dates
  std::vector<float> t;  // years since the first date, as MintPy: float32 days / 365.25
  for (const auto& d : dates) t.push_back(static_cast<float>(day_number(d) - day_number(dates[0])) / 365.25f);
  const std::size_t M = dates.size() - 1;
  std::vector<double> dt(M);
  for (std::size_t j = 0; j < M; ++j) dt[j] = static_cast<double>(t[j + 1] - t[j]);
  std::map<std::string, std::size_t> index;
  for (std::size_t d = 0; d < dates.size(); ++d) index[dates[d]] = d;
  Array B(DType::Float64, {pairs.size(), M});
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const std::size_t a = index[pairs[k].first], b = index[pairs[k].second];
    const double sign = a < b ? 1.0 : -1.0;
    for (std::size_t j = std::min(a, b); j < std::max(a, b); ++j) B.data<double>()[k * M + j] = sign * dt[j];
  }
  if (intervals) *intervals = dt;
  return B;
}

long day_number(const std::string& d) {
  long y = std::stol(d.substr(0, 4));
  const long m = std::stol(d.substr(4, 2)), day = std::stol(d.substr(6, 2));
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
  const long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

std::string date_of_day(long z) {
  z += 719468;
  const long era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  const long d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
  char b[64];  // room for any long, so no output is cut
  std::snprintf(b, sizeof b, "%04ld%02ld%02ld", y, m, d);
  return b;
}

double decimal_year(const std::string& d, const std::string& what) {
  if (!is_date(d)) throw InputError(what + ": expected a date YYYYMMDD, found '" + d + "'");
  if (!is_calendar_date(d)) throw InputError(what + ": expected a calendar date YYYYMMDD, found '" + d + "'");
  const std::string y = d.substr(0, 4);
  const long first = day_number(y + "0101"), next = day_number(y + "1231") + 1;
  return std::stoi(y) + static_cast<double>(day_number(d) - first) / static_cast<double>(next - first);
}

std::vector<double> mintpy_years(const std::vector<std::string>& dates, const std::string& what) {
  std::vector<double> t;
  for (const auto& d : dates) {
    decimal_year(d, what);  // checks the date
    t.push_back(std::stoi(d.substr(0, 4)) + static_cast<double>(day_number(d) - day_number(d.substr(0, 4) + "0101")) / 365.25);
  }
  return t;
}

std::vector<double> read_times(const std::string& path) {
  std::vector<double> t;
  for_each_line(path, [&](std::size_t no, const std::string& line) {
    if (is_date(line)) {
      t.push_back(decimal_year(line, path + ": line " + std::to_string(no)));
      return;
    }
    char* end = nullptr;
    const double v = std::strtod(line.c_str(), &end);
    if (end == line.c_str() || *end != '\0' || !std::isfinite(v))
      throw InputError(path + ": line " + std::to_string(no) + ": expected a time (a number or YYYYMMDD), found '" + line + "'");
    t.push_back(v);
  });
  return t;
}

bool is_design_spec(const std::string& s) { return s == "sbas" || s.rfind("poly:", 0) == 0 || s.rfind("harmonic:", 0) == 0; }

namespace {

/// A whole number 0..64 of a spec, or an InputError naming the spec.
/// A description split at its colons: "harmonic:2:1" is {"harmonic", "2", "1"}.
std::vector<std::string> spec_parts(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  return parts;
}

bool is_harmonic(const std::vector<std::string>& parts) { return (parts.size() == 2 || parts.size() == 3) && parts[0] == "harmonic"; }

/// The period of harmonic:K[:P]: P, else a year (1) where the times are
/// given, else the n bands. Throws InputError for a P that is not positive.
double harmonic_period(const std::string& spec, const std::vector<std::string>& parts, bool timed, std::size_t n) {
  if (parts.size() < 3) return timed ? 1.0 : static_cast<double>(n);
  char* end = nullptr;
  const double period = std::strtod(parts[2].c_str(), &end);
  if (*end || !(period > 0)) throw InputError(spec + ": expected a positive period, found '" + parts[2] + "'");
  return period;
}

/// Whether a built design has times: a times file, or the cube's band dates.
bool timed(const DesignSpec& d) { return !d.times.empty() || !d.dates.empty(); }

std::size_t spec_integer(const std::string& spec, const std::string& s) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0 || v > 64) throw InputError(spec + ": expected a whole number from 0 to 64, found '" + s + "'");
  return static_cast<std::size_t>(v);
}

/// Powers 0..D of t - mean t.
Array poly_design(const std::vector<double>& t, double mean, std::size_t D) {
  const std::size_t n = t.size();
  Array A(DType::Float64, {n, D + 1});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k <= D; ++k) A.data<double>()[i * (D + 1) + k] = std::pow(t[i] - mean, static_cast<double>(k));
  return A;
}

/// Offset, trend, and K harmonics (cos, sin) of the period.
Array harmonic_design(const std::vector<double>& t, double mean, std::size_t K, double period) {
  const std::size_t n = t.size(), M = 2 + 2 * K;
  Array A(DType::Float64, {n, M});
  for (std::size_t i = 0; i < n; ++i) {
    double* row = A.data<double>() + i * M;
    row[0] = 1;
    row[1] = t[i] - mean;
    for (std::size_t k = 1; k <= K; ++k) {
      const double w = 2 * 3.141592653589793 * static_cast<double>(k) * t[i] / period;
      row[2 * k] = std::cos(w);
      row[2 * k + 1] = std::sin(w);
    }
  }
  return A;
}

}  // namespace

bool is_calendar_date(const std::string& s) { return is_date(s) && date_of_day(day_number(s)) == s; }

std::vector<std::string> band_dates(const std::vector<std::string>& names) {
  std::vector<std::string> dates;
  for (const auto& name : names) {
    std::string d = name;
    d.erase(std::remove(d.begin(), d.end(), '-'), d.end());  // YYYY-MM-DD too
    if (d.size() > 8) d = d.substr(d.size() - 8);            // ..._YYYYMMDD
    if (!is_calendar_date(d) || (!dates.empty() && d <= dates.back())) return {};
    dates.push_back(d);
  }
  return dates;
}

Array build_design(const std::string& spec, std::size_t n, const std::vector<double>& times) {
  std::vector<double> t = times;
  if (t.empty())
    for (std::size_t i = 0; i < n; ++i) t.push_back(static_cast<double>(i));
  if (t.size() != n)
    throw InputError("times: expected " + std::to_string(n) + " times (one per band), found " + std::to_string(t.size()));
  double mean = 0;
  for (double v : t) mean += v / static_cast<double>(n);
  const std::vector<std::string> parts = spec_parts(spec);
  if (parts.size() == 2 && parts[0] == "poly") return poly_design(t, mean, spec_integer(spec, parts[1]));
  if (is_harmonic(parts)) {
    const std::size_t K = spec_integer(spec, parts[1]);
    return harmonic_design(t, mean, K, harmonic_period(spec, parts, !times.empty(), n));
  }
  throw InputError("design: expected a file, sbas, poly:D or harmonic:K[:P], found '" + spec + "'");
}

std::vector<std::string> design_terms(const DesignSpec& d) {
  const std::vector<std::string> parts = spec_parts(d.spec);
  std::vector<std::string> names;
  if (parts.size() == 2 && parts[0] == "poly") {
    const std::size_t D = spec_integer(d.spec, parts[1]);
    for (std::size_t k = 0; k <= D; ++k) names.push_back(k == 0 ? "offset" : k == 1 ? "trend" : "t^" + std::to_string(k));
  } else if (is_harmonic(parts)) {
    const std::size_t K = spec_integer(d.spec, parts[1]);
    const bool yearly = timed(d) && harmonic_period(d.spec, parts, true, 0) == 1.0;
    names = {"offset", "trend"};
    for (std::size_t k = 1; k <= K; ++k) {
      const std::string h = yearly && k == 1 ? "annual" : yearly && k == 2 ? "semiannual" : "harmonic" + std::to_string(k);
      names.push_back(h + "_cos");
      names.push_back(h + "_sin");
    }
  } else if (!is_design_spec(d.spec) && (has_extension(d.spec, ".csv") || has_extension(d.spec, ".txt"))) {
    read_csv_matrix(d.spec, &names);
  }
  return names;
}

std::vector<Harmonic> design_harmonics(const DesignSpec& d, std::size_t n) {
  const std::vector<std::string> parts = spec_parts(d.spec);
  if (!is_harmonic(parts)) return {};
  const std::vector<std::string> terms = design_terms(d);
  const double period = harmonic_period(d.spec, parts, timed(d), n);
  bool dated = timed(d);
  if (!d.times.empty())
    for_each_line(d.times, [&](std::size_t, const std::string& line) { dated = dated && is_date(line); });
  std::vector<Harmonic> out;
  for (std::size_t c = 2; c + 1 < terms.size(); c += 2) {
    const std::size_t k = c / 2;
    out.push_back({terms[c].substr(0, terms[c].size() - 4), c, c + 1, period / static_cast<double>(k), dated ? 365.25 : 0.0});
  }
  return out;
}

Array make_design(const DesignSpec& d, std::size_t n) {
  if (d.spec == "sbas") {
    if (d.pairs.empty())
      throw InputError("sbas: expected a pairs file (YYYYMMDD_YYYYMMDD lines) or a MintPy ifgramStack.h5 cube, found neither");
    Array a = sbas_design(read_pairs(d.pairs), nullptr, d.pairs);
    if (a.dim(0) != n)
      throw InputError(d.pairs + ": expected " + std::to_string(n) + " pairs (one per band of the cube), found " +
                       std::to_string(a.dim(0)));
    return a;
  }
  if (is_design_spec(d.spec)) {
    if (d.times.empty() && !d.dates.empty()) {
      if (d.dates.size() != n)
        throw InputError("dates: expected " + std::to_string(n) + " dates (one per band of the cube), found " + std::to_string(d.dates.size()));
      std::vector<double> t;
      for (const auto& date : d.dates) t.push_back(decimal_year(date, "the cube's band date"));
      return build_design(d.spec, n, t);
    }
    if (d.times.empty()) return build_design(d.spec, n, {});
    const std::vector<double> t = read_times(d.times);
    if (t.size() != n)
      throw InputError(d.times + ": expected " + std::to_string(n) + " times (one per band of the cube), found " +
                       std::to_string(t.size()));
    return build_design(d.spec, n, t);
  }
  return read_array(d.spec);
}

}  // namespace cubesolve
