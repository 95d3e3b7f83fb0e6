#include "backplane/error.h"

namespace bp {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Value: return "ValueError";
    case ErrorKind::Type: return "TypeError";
    case ErrorKind::Runtime: return "RuntimeError";
    case ErrorKind::NotImplemented: return "NotImplementedError";
    case ErrorKind::Index: return "IndexError";
    case ErrorKind::LinAlg: return "LinAlgError";
  }
  return "Error";
}

Error::Error(ErrorKind kind, std::string message, std::string subject, std::string value,
             std::string allowed)
    : std::runtime_error(std::move(message)),
      kind_(kind),
      subject_(std::move(subject)),
      value_(std::move(value)),
      allowed_(std::move(allowed)) {}

void throw_bad_value(const std::string& subject, const std::string& value, const std::string& allowed) {
  throw Error(ErrorKind::Value, subject + ": expected " + allowed + ", got " + value, subject, value,
              allowed);
}

void throw_bad_type(const std::string& subject, const std::string& got_type, const std::string& allowed) {
  throw Error(ErrorKind::Type, subject + " expects " + allowed + ", but got " + got_type, subject,
              got_type, allowed);
}

void throw_runtime(const std::string& subject, const std::string& message) {
  throw Error(ErrorKind::Runtime, message, subject);
}

void throw_not_implemented(const std::string& subject, const std::string& message) {
  throw Error(ErrorKind::NotImplemented, message, subject);
}

void throw_linalg(const std::string& subject, const std::string& message) {
  throw Error(ErrorKind::LinAlg, message, subject);
}

}  // namespace bp
