#pragma once
// Design matrices built from a description instead of read from a file:
//   sbas        small-baseline InSAR: one row per interferogram (pair of
//               dates), one column per date after the first (the reference)
//   poly:D      polynomial of degree D in time: powers of (t - mean t)
//   harmonic:K  offset, trend and K annual harmonics (cos, sin of 2πkt/P);
//               harmonic:K:P sets the period P (default 1, or the number of
//               bands when times are band indices)

#include <cubesolve/data/array.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cubesolve {

using DatePair = std::pair<std::string, std::string>;  // YYYYMMDD, YYYYMMDD

/// Reads interferogram pairs, one "YYYYMMDD_YYYYMMDD" per line (also two
/// dates separated by white space or a comma); '#' starts a comment.
/// Throws IoError, InputError naming the line.
std::vector<DatePair> read_pairs(const std::string& path);

/// The distinct dates of `pairs`, sorted.
std::vector<std::string> pair_dates(const std::vector<DatePair>& pairs);
/// Each pair's name, "YYYYMMDD_YYYYMMDD" (MintPy's name of an interferogram).
std::vector<std::string> pair_names(const std::vector<DatePair>& pairs);

/// What the M unknowns of a design are: the dates after the first where the
/// design's rows are the date `pairs` of an SBAS network of M + 1 dates,
/// else its `terms` where there are M of them; empty otherwise.
std::vector<std::string> unknown_names(const std::vector<DatePair>& pairs, const std::vector<std::string>& terms, std::size_t M);

/// The SBAS design (pairs, dates - 1) and, in `dates`, the sorted dates
/// (the first is the reference, its column removed). Throws InputError for a
/// malformed date or a pair of one date twice; `what` names the source.
Array sbas_design(const std::vector<DatePair>& pairs, std::vector<std::string>* dates = nullptr,
                  const std::string& what = "pairs");

/// MintPy's design for minimum-norm velocity (its B): one column per
/// interval between consecutive dates; a pair's row holds the lengths of the
/// intervals it spans in years (days / 365.25 as MintPy computes them, in
/// float32), negative for a pair given late-to-early. `intervals` receives
/// the lengths: the time series is the running sum of velocity × length.
/// Throws as sbas_design.
Array sbas_velocity_design(const std::vector<DatePair>& pairs, std::vector<double>* intervals,
                           const std::string& what = "pairs");

/// Days from 1970-01-01 to a YYYYMMDD date (proleptic Gregorian), and the
/// YYYYMMDD date of such a day number: the one calendar of the data layer.
/// day_number takes dates the readers have checked (decimal_year,
/// read_pairs); others throw std::invalid_argument.
long day_number(const std::string& yyyymmdd);
std::string date_of_day(long days);

/// A YYYYMMDD date whose month and day exist (leap years included).
bool is_calendar_date(const std::string& yyyymmdd);
/// The dates bands are named with: each name a date YYYYMMDD or YYYY-MM-DD,
/// or ending in one (ifg_20200113), increasing; none unless every band has one.
std::vector<std::string> band_dates(const std::vector<std::string>& names);

/// Decimal years of a YYYYMMDD date. Throws InputError naming `what`.
double decimal_year(const std::string& yyyymmdd, const std::string& what);
/// MintPy's decimal years of YYYYMMDD dates (ptime.yyyymmdd2years): the
/// year plus (day of the year - 1) / 365.25, the time axis of its velocity
/// (timeseries2velocity.py). Throws InputError naming `what`.
std::vector<double> mintpy_years(const std::vector<std::string>& dates, const std::string& what);

/// Reads one time per line: a number, or a YYYYMMDD date (as decimal years).
/// Throws IoError, InputError naming the line.
std::vector<double> read_times(const std::string& path);

/// True when `spec` is "sbas", "poly:D" or "harmonic:K[:P]". Never throws.
bool is_design_spec(const std::string& spec);

/// Builds "poly:D" or "harmonic:K[:P]" for the given times (one per band);
/// with no times, band indices 0..n-1. Throws InputError for a malformed
/// spec, times of another count, or more unknowns than make sense.
Array build_design(const std::string& spec, std::size_t n, const std::vector<double>& times);

/// Where a design comes from: `spec` names a file (.npy, .csv) or a
/// description ("sbas", "poly:D", "harmonic:K[:P]"); `pairs` names the
/// pairs file sbas needs, `times` the times file of poly and harmonic (band
/// index without one).
struct DesignSpec {
  std::string spec, pairs, times;
  /// The cube's own dates of its bands (YYYYMMDD), the times of a built
  /// design where no times file is given; none: band index.
  std::vector<std::string> dates = {};
};

/// The names of a design's unknowns where it has them: poly:D "offset",
/// "trend", "t^2", …; harmonic:K "offset", "trend", then "annual_cos",
/// "annual_sin", "semiannual_cos", … of a period of a year (harmonicK_cos,
/// … beyond, or of another period); a CSV file's header (a name per
/// column); none otherwise. Throws IoError, InputError as make_design.
std::vector<std::string> design_terms(const DesignSpec& spec);

/// A periodic term of a built harmonic design: its name ("annual",
/// "semiannual", "harmonicK"), the columns of its cosine and sine, its
/// period in the design's time unit (band index, or decimal years where the
/// times are dates) and, where the times are dates, how many days that unit is
/// (365.25; 0 otherwise).
struct Harmonic {
  std::string name;
  std::size_t cos = 0, sin = 0;
  double period = 1, unit_days = 0;
  /// The period as its peak is given: in days where the times are dates.
  double span() const { return unit_days > 0 ? period * unit_days : period; }
};
/// The periodic terms of a harmonic:K[:P] design for n bands (none for
/// other designs). Throws IoError, InputError as make_design.
std::vector<Harmonic> design_harmonics(const DesignSpec& spec, std::size_t n);

/// The design matrix for a cube of n bands, read or built. Throws IoError,
/// InputError naming the file or the description (a built design of another
/// number of rows than n included).
Array make_design(const DesignSpec& spec, std::size_t n);

}  // namespace cubesolve
