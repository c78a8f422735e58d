#pragma once
#include <stdexcept>

namespace nbody {

// Bad input from the user (an unknown pattern, a bad size, an unwritable path): the command line
// prints its message on one line and exits with code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nbody
