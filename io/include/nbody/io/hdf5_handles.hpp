#pragma once
// Owning wrappers for HDF5 C API identifiers, so that every way out of a function, exceptions
// included, closes what it opened; and a scope in which HDF5 prints nothing. For code that uses the
// C API directly: snapshot.cpp, and the tests that write damaged files. Only in builds with HDF5.
#include <hdf5.h>

#include <utility>

namespace nbody::hdf5 {

// One open HDF5 object, closed by the function that matches its kind. Predefined types such as
// H5T_NATIVE_DOUBLE are not owned and never wrapped.
class Handle {
 public:
  using Close = herr_t (*)(hid_t);

  Handle() = default;
  Handle(hid_t id, Close close) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      close_ = other.close_;
    }
    return *this;
  }
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  void reset() {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = H5I_INVALID_HID;
  }

  hid_t id_ = H5I_INVALID_HID;
  Close close_ = nullptr;
};

inline Handle owned_file(hid_t id) {
  return {id, H5Fclose};
}
inline Handle owned_group(hid_t id) {
  return {id, H5Gclose};
}
inline Handle owned_dataset(hid_t id) {
  return {id, H5Dclose};
}
inline Handle owned_attribute(hid_t id) {
  return {id, H5Aclose};
}
inline Handle owned_dataspace(hid_t id) {
  return {id, H5Sclose};
}
inline Handle owned_datatype(hid_t id) {
  return {id, H5Tclose};
}
inline Handle owned_property_list(hid_t id) {
  return {id, H5Pclose};
}

// HDF5 prints its whole error stack to stderr on every failed call unless told not to; nbody-fair
// reports a failure itself, on one line. The setting is per thread in thread-safe builds (Debian's
// is one), so each call that uses HDF5 silences it for its own scope and then restores it.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &previous_function_, &previous_data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, previous_function_, previous_data_); }

 private:
  H5E_auto2_t previous_function_ = nullptr;
  void* previous_data_ = nullptr;
};

}  // namespace nbody::hdf5
