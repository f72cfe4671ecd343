#include <cubesolve/error.hpp>
#include <cubesolve/io/npy.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace cubesolve {
namespace {

// Splits on commas, semicolons and white space; returns false on a field that is not a number.
bool parse_numbers(const std::string& line, std::vector<double>& out, std::string& bad_field) {
  out.clear();
  const char* p = line.c_str();
  while (*p) {
    while (*p && (std::isspace(static_cast<unsigned char>(*p)) || *p == ',' || *p == ';')) ++p;
    if (!*p) break;
    const char* start = p;
    while (*p && !std::isspace(static_cast<unsigned char>(*p)) && *p != ',' && *p != ';') ++p;
    const std::string field(start, p);
    char* end = nullptr;
    const double v = std::strtod(field.c_str(), &end);
    if (end == field.c_str() || *end != '\0') {
      bad_field = field;
      return false;
    }
    out.push_back(v);
  }
  return true;
}

}  // namespace

Array read_csv_matrix(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
  std::vector<double> values, row;
  std::size_t cols = 0, rows = 0, line_no = 0;
  bool header_allowed = true;
  std::string line, bad_field;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (!parse_numbers(line, row, bad_field)) {
      if (header_allowed) {
        header_allowed = false;
        continue;
      }
      throw InputError(path + ": line " + std::to_string(line_no) + ": expected numbers, found '" + bad_field + "'");
    }
    header_allowed = false;
    if (rows == 0) cols = row.size();
    else if (row.size() != cols)
      throw InputError(path + ": line " + std::to_string(line_no) + ": expected " + std::to_string(cols) +
                       " values like the first row, found " + std::to_string(row.size()));
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
  }
  if (in.bad()) throw IoError(path + ": read failed");
  if (rows == 0) throw InputError(path + ": expected a matrix (one row per observation), found no numeric rows");
  Array a(DType::Float64, {rows, cols});
  std::copy(values.begin(), values.end(), a.data<double>());
  return a;
}

}  // namespace cubesolve
