#include <cubesolve/error.hpp>
#include <cubesolve/io/npy.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace cubesolve {
namespace {

/// A number as written, whatever the process's locale: '.' the decimal
/// mark, an optional sign.
bool parse_number(std::string field, double& v) {
  if (!field.empty() && field[0] == '+') field.erase(0, 1);
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, v);
  return ec == std::errc() && ptr == end && !field.empty();
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string trim(const std::string& s) {
  const auto a = std::find_if_not(s.begin(), s.end(), is_space);
  const auto b = std::find_if_not(s.rbegin(), s.rend(), is_space).base();
  return a < b ? std::string(a, b) : std::string();
}

/// The fields of a line: split on ';' in a ';' file (each field trimmed;
/// ',' the decimal mark), else on ',' and white space. Returns "" or why the
/// line cannot be read unambiguously.
std::string split(const std::string& line, bool semicolons, std::vector<std::string>& fields) {
  fields.clear();
  if (semicolons) {
    for (std::size_t a = 0;;) {
      const std::size_t b = line.find(';', a);
      std::string f = trim(line.substr(a, b == std::string::npos ? std::string::npos : b - a));
      if (f.find(',') != std::string::npos) {
        if (f.find('.') != std::string::npos || std::count(f.begin(), f.end(), ',') > 1)
          return "expected one decimal comma in '" + f + "' (a ';'-separated file), found it beside '.' or twice";
        std::replace(f.begin(), f.end(), ',', '.');
      }
      if (!f.empty() || b != std::string::npos) fields.push_back(f);
      if (b == std::string::npos) break;
      a = b + 1;
    }
    if (!fields.empty() && fields.back().empty()) fields.pop_back();  // a ';' ending the line
    return "";
  }
  // Commas and white space: each gap between two values holds a comma, or
  // none does; both kinds in one line ("0,51 0,95") is a decimal comma
  // without ';' between the values, which reads as another matrix.
  bool comma_gap = false, space_gap = false;
  for (std::size_t p = 0; p < line.size();) {
    while (p < line.size() && (is_space(line[p]) || line[p] == ',')) ++p;
    if (p >= line.size()) break;
    const std::size_t start = p;
    while (p < line.size() && !is_space(line[p]) && line[p] != ',') ++p;
    fields.push_back(line.substr(start, p - start));
    std::size_t q = p;
    bool comma = false;
    for (; q < line.size() && (is_space(line[q]) || line[q] == ','); ++q) comma = comma || line[q] == ',';
    if (q < line.size()) (comma ? comma_gap : space_gap) = true;
  }
  if (comma_gap && space_gap)
    return "expected one separator between values (commas, ';' or white space), found commas and white space both "
           "(decimal commas need ';' between values)";
  return "";
}

}  // namespace

Array read_csv_matrix(const std::string& path, std::vector<std::string>* header) {
  if (header) header->clear();
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
  // The lines that hold something (not blank, not a # comment), with their numbers.
  std::vector<std::pair<std::size_t, std::string>> lines;
  std::string line;
  for (std::size_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    lines.emplace_back(line_no, line);
  }
  if (in.bad()) throw IoError(path + ": read failed");
  // ';' between values (what spreadsheets write where ',' is the decimal
  // mark): then every line that holds more than one value has them.
  const auto semicolon = std::find_if(lines.begin(), lines.end(), [](const auto& l) { return l.second.find(';') != std::string::npos; });
  const bool semicolons = semicolon != lines.end();
  std::vector<double> values;
  std::vector<std::string> fields;
  std::size_t cols = 0, rows = 0;
  bool header_allowed = true;
  for (const auto& [line_no, text] : lines) {
    const std::string where = path + ": line " + std::to_string(line_no) + ": ";
    const std::string why = split(text, semicolons, fields);
    if (!why.empty()) throw InputError(where + why);
    std::vector<double> row(fields.size());
    std::string bad;
    for (std::size_t k = 0; k < fields.size() && bad.empty(); ++k)
      if (!parse_number(fields[k], row[k])) bad = fields[k];
    if (!bad.empty()) {
      if (header_allowed) {  // a header line
        header_allowed = false;
        if (header) *header = fields;
        continue;
      }
      throw InputError(where + "expected numbers, found '" + bad + "'");
    }
    header_allowed = false;
    if (semicolons && text.find(';') == std::string::npos && text.find(',') != std::string::npos && fields.size() == 1 &&
        cols > 1)
      throw InputError(where + "expected ';' between values as on line " + std::to_string(semicolon->first) +
                       " (a ';'-separated file reads ',' as the decimal mark), found none");
    if (rows == 0) cols = row.size();
    else if (row.size() != cols)
      throw InputError(where + "expected " + std::to_string(cols) + " values like the first row, found " + std::to_string(row.size()));
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
  }
  if (rows == 0) throw InputError(path + ": expected a matrix (one row per observation), found no numeric rows");
  if (header && header->size() != cols) header->clear();
  Array a(DType::Float64, {rows, cols});
  std::copy(values.begin(), values.end(), a.data<double>());
  return a;
}

}  // namespace cubesolve
