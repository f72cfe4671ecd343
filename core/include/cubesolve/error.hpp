#pragma once
// The exceptions the core throws. Per-pixel outcomes are never exceptions:
// they are reported in SolveResult::status. An exception means the whole
// operation could not be done.

#include <stdexcept>
#include <string>

namespace cubesolve {

/// Base of everything the core throws on purpose.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Bad arguments or bad input content: the message names the file (or the
/// argument), what was expected and what was found. CLI exit code 2.
class InputError : public Error {
public:
  using Error::Error;
};

/// A file could not be opened, read or written. CLI exit code 3.
class IoError : public Error {
public:
  using Error::Error;
};

/// A numerical or device failure that is not a per-pixel outcome. CLI exit code 4.
class NumericalError : public Error {
public:
  using Error::Error;
};

/// The progress callback returned false. Nothing of the interrupted
/// operation is returned.
class Cancelled : public Error {
public:
  Cancelled() : Error("cancelled") {}
};

/// The exit code of the command-line tools for an exception: 2 InputError,
/// 3 IoError, 4 NumericalError, running out of memory and anything else
/// (130 for Cancelled, as Ctrl-C). Every front end maps failures so.
/// Never throws.
int exit_code(const std::exception& e) noexcept;

}  // namespace cubesolve
