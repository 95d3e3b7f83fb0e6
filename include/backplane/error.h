#pragma once
// Typed errors. Every error Backplane raises is a bp::Error carrying a kind
// (which Python exception it becomes) and structured data: the subject (flag
// or op name), the value received and what is allowed. The message is built
// from them so C++ and Python users read the same text. In Python each kind
// is its natural class and also RuntimeError, the class PyTorch raises for
// the same mistakes (python/src/bind_errors.cpp).

#include <stdexcept>
#include <string>

namespace bp {

enum class ErrorKind {
  Value,           // ValueError: a value outside the allowed domain
  Type,            // TypeError: the wrong type of value
  Runtime,         // RuntimeError: a state that forbids the call
  NotImplemented,  // NotImplementedError: not built / not supported here
  Index,           // IndexError: an index out of range
  LinAlg,          // LinAlgError (a RuntimeError): a numerical failure of a linear-algebra routine
                   // (a singular matrix, one that is not positive-definite), as torch.linalg.LinAlgError
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string subject = {}, std::string value = {},
        std::string allowed = {});

  ErrorKind kind() const { return kind_; }
  // The flag or op the error is about ("cudnn.benchmark_limit", "matmul").
  const std::string& subject() const { return subject_; }
  // The value received, as text ("-3").
  const std::string& value() const { return value_; }
  // What would have been accepted ("an integer >= 0").
  const std::string& allowed() const { return allowed_; }

 private:
  ErrorKind kind_;
  std::string subject_, value_, allowed_;
};

// "<subject>: expected <allowed>, got <value>" as a ValueError.
[[noreturn]] void throw_bad_value(const std::string& subject, const std::string& value,
                                  const std::string& allowed);
// "<subject> expects <allowed>, but got <type>" as a TypeError.
[[noreturn]] void throw_bad_type(const std::string& subject, const std::string& got_type,
                                 const std::string& allowed);
[[noreturn]] void throw_runtime(const std::string& subject, const std::string& message);
[[noreturn]] void throw_not_implemented(const std::string& subject, const std::string& message);
// A numerical failure of a linalg routine (LinAlgError; in Python
// backplane.linalg.LinAlgError, a RuntimeError).
[[noreturn]] void throw_linalg(const std::string& subject, const std::string& message);

}  // namespace bp
