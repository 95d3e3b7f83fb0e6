#pragma once
// Warnings and trace lines. Warnings go to a replaceable handler: stderr by
// default; the Python package routes them to warnings.warn.

#include <functional>
#include <string>

namespace bp::log {

using WarningHandler = std::function<void(const std::string& message)>;

void warn(const std::string& message);
// Warns only the first time `key` is seen in this process.
void warn_once(const std::string& key, const std::string& message);
// Installs a handler; returns the previous one. nullptr restores stderr.
WarningHandler set_warning_handler(WarningHandler handler);

// One line to stderr, for trace output (backends.trace).
void trace(const std::string& line);

}  // namespace bp::log
