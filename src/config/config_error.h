#pragma once
// The error of configuration and scenario loading: what() is the whole message for the user,
// with file, line, field path and value where known (yaml_reader.h builds those). Exceptions
// are the error lane for loading only, at start-up.

#include <stdexcept>

namespace spillway::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace spillway::config
