// Snapshots in HDF5, in GADGET-4's layout (docs/snapshot-format.md), through the HDF5 C API.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nbody/errors.hpp"
#include "nbody/files.hpp"
#include "nbody/io/hdf5_handles.hpp"
#include "nbody/io/snapshot.hpp"
#include "nbody/sizes.hpp"

namespace nbody {
namespace {

// GADGET's six particle types (gas, halo, disk, bulge, stars, boundary). Every nbody-fair body is
// a collisionless "halo" particle, type 1, as in GADGET-4's own gravity-only examples.
constexpr std::size_t kParticleTypes = 6;
constexpr std::size_t kBodyType = 1;
constexpr const char* kBodyGroup = "PartType1";
constexpr const char* kFormatName = "nbody-fair/snapshot";
constexpr std::int32_t kFormatVersion = 1;

std::string quoted(const std::filesystem::path& path) {
  return fmt::format("'{}'", path.string());
}

// ---------------------------------------------------------------------------------------------
// Writing. The file is built in memory (HDF5's core driver with no backing store) and its image
// goes to disk through write_file_atomically: a snapshot on disk is always whole.

// HDF5 failing to build a file in memory is no fault of the user's (out of memory, or a bug):
// std::runtime_error, not UsageError.
class ImageBuilder {
 public:
  explicit ImageBuilder(const std::filesystem::path& path) : path_(path) {}

  hid_t check(hid_t id, std::string_view what) const {
    if (id < 0) fail(what);
    return id;
  }
  void check(herr_t status, std::string_view what) const {
    if (status < 0) fail(what);
  }

  void write_attribute(hid_t object, const char* name, hid_t file_type, hid_t memory_type,
                       const void* values, hsize_t count, bool scalar) const {
    const hdf5::Handle space = hdf5::owned_dataspace(
        check(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), name));
    const hdf5::Handle attribute = hdf5::owned_attribute(
        check(H5Acreate2(object, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), name));
    check(H5Awrite(attribute.get(), memory_type, values), name);
  }

  template <class T>
  void write_scalar(hid_t object, const char* name, hid_t file_type, hid_t memory_type,
                    T value) const {
    write_attribute(object, name, file_type, memory_type, &value, 1, true);
  }

  // Variable-length UTF-8: h5py reads it as str (a fixed-length string comes back as bytes), and
  // it may be empty (a fixed-length string type may not).
  void write_string(hid_t object, const char* name, const std::string& value) const {
    const hdf5::Handle type = hdf5::owned_datatype(check(H5Tcopy(H5T_C_S1), name));
    check(H5Tset_size(type.get(), H5T_VARIABLE), name);
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), name);
    const char* text = value.c_str();
    write_attribute(object, name, type.get(), type.get(), &text, 1, true);
  }

  void write_dataset(hid_t group, const char* name, hid_t file_type, hid_t memory_type,
                     std::span<const hsize_t> dims, const void* values) const {
    const hdf5::Handle space = hdf5::owned_dataspace(
        check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), name));
    const hdf5::Handle dataset = hdf5::owned_dataset(check(
        H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        name));
    check(H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), name);
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw std::runtime_error(
        fmt::format("HDF5 could not build snapshot {} in memory (at {})", quoted(path_), what));
  }

  std::filesystem::path path_;
};

void write_header(const ImageBuilder& builder, hid_t file, const SnapshotData& data) {
  const hdf5::Handle header = hdf5::owned_group(
      builder.check(H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "Header"));
  const hid_t h = header.get();
  std::array<std::uint64_t, kParticleTypes> counts{};
  counts[kBodyType] = data.state.bodies.size();
  const std::array<std::uint32_t, kParticleTypes> high_words{};
  const std::array<double, kParticleTypes> mass_table{};  // 0: each body's mass is in Masses
  // GADGET-4's names and types (its snap_io.cc). Its particle counts are 64-bit, so the high words
  // that GADGET-2/3 readers add to them are 0; they are written for those readers.
  builder.write_attribute(h, "NumPart_ThisFile", H5T_STD_U64LE, H5T_NATIVE_UINT64, counts.data(),
                          kParticleTypes, false);
  builder.write_attribute(h, "NumPart_Total", H5T_STD_U64LE, H5T_NATIVE_UINT64, counts.data(),
                          kParticleTypes, false);
  builder.write_attribute(h, "NumPart_Total_HighWord", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                          high_words.data(), kParticleTypes, false);
  builder.write_attribute(h, "MassTable", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, mass_table.data(),
                          kParticleTypes, false);
  builder.write_scalar(h, "Time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data.header.time);
  // Not cosmological, and not periodic: BoxSize 0 is GADGET's word for an isolated system.
  builder.write_scalar(h, "Redshift", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0.0);
  builder.write_scalar(h, "BoxSize", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0.0);
  builder.write_scalar(h, "NumFilesPerSnapshot", H5T_STD_I32LE, H5T_NATIVE_INT32, std::int32_t{1});
  // nbody-fair's own.
  builder.write_string(h, "Format", kFormatName);
  builder.write_scalar(h, "FormatVersion", H5T_STD_I32LE, H5T_NATIVE_INT32, kFormatVersion);
  builder.write_scalar(h, "Step", H5T_STD_I64LE, H5T_NATIVE_INT64, data.header.step);
  builder.write_scalar(h, "Softening", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data.header.softening);
  builder.write_scalar(h, "TimeStep", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data.header.dt);
  builder.write_string(h, "Implementation", data.header.implementation);
  builder.write_string(h, "Precision", data.header.precision);
  builder.write_string(h, "InitialCondition", data.header.initial_condition);
  builder.write_scalar(h, "Seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, data.header.seed);
}

void write_bodies(const ImageBuilder& builder, hid_t file, const PhaseSpaceState& state) {
  const hdf5::Handle group = hdf5::owned_group(builder.check(
      H5Gcreate2(file, kBodyGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), kBodyGroup));
  const std::size_t n = state.bodies.size();
  // Body<double> keeps the mass beside the position, so each dataset is gathered into a dense
  // array first.
  std::vector<double> coordinates(3 * n), velocities(3 * n), masses(n);
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Body<double>& b = state.bodies[i];
    const Vec3<double>& v = state.velocities[i];
    coordinates[3 * i] = b.x;
    coordinates[3 * i + 1] = b.y;
    coordinates[3 * i + 2] = b.z;
    velocities[3 * i] = v.x;
    velocities[3 * i + 1] = v.y;
    velocities[3 * i + 2] = v.z;
    masses[i] = b.m;
    ids[i] = i;  // the body's index in nbody-fair's arrays
  }
  const std::array<hsize_t, 2> vectors{n, 3};
  const std::array<hsize_t, 1> scalars{n};
  const hid_t g = group.get();
  builder.write_dataset(g, "Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, vectors,
                        coordinates.data());
  builder.write_dataset(g, "Velocities", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, vectors,
                        velocities.data());
  builder.write_dataset(g, "Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, scalars, masses.data());
  builder.write_dataset(g, "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_UINT64, scalars, ids.data());
}

std::string build_image(const std::filesystem::path& path, const SnapshotData& data) {
  const ImageBuilder builder(path);
  const hdf5::Handle access =
      hdf5::owned_property_list(builder.check(H5Pcreate(H5P_FILE_ACCESS), "file access"));
  // Grows by about the whole file at once (8 numbers a body), so HDF5 reallocates rarely.
  const std::size_t increment = 64 * data.state.bodies.size() + (std::size_t{1} << 16);
  builder.check(H5Pset_fapl_core(access.get(), increment, false), "file access");
  // With no backing store the name is only a label: nothing is created on disk.
  const hdf5::Handle file = hdf5::owned_file(builder.check(
      H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), "file creation"));
  write_header(builder, file.get(), data);
  write_bodies(builder, file.get(), data.state);
  builder.check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flush");
  const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
  builder.check(herr_t{size > 0 ? 0 : -1}, "file image size");
  std::string image(static_cast<std::size_t>(size), '\0');
  builder.check(herr_t{H5Fget_file_image(file.get(), image.data(), image.size()) == size ? 0 : -1},
                "file image");
  return image;
}

// ---------------------------------------------------------------------------------------------
// Reading. Every check names the file and what is wrong in it, on one line.

struct OpenDataset {
  hdf5::Handle dataset;
  std::vector<hsize_t> dims;
};

class SnapshotReader {
 public:
  explicit SnapshotReader(const std::filesystem::path& path) : path_(path) {}

  SnapshotData read() {
    open_file();
    SnapshotData data;
    {
      const hdf5::Handle header = open_group(file_.get(), "Header");
      data.header = read_header(header.get());
    }
    refuse_other_particle_types();
    const hdf5::Handle bodies = open_group(file_.get(), kBodyGroup);
    data.state = read_bodies(bodies.get());
    return data;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw UsageError(fmt::format("cannot read {}: {}", quoted(path_), what));
  }

  void open_file() {
    // HDF5 is given regular files only: opening a FIFO would wait for a writer.
    if (const std::optional<std::string> why = why_not_an_input_file(path_)) fail(*why);
    const hdf5::Handle access = hdf5::owned_property_list(H5Pcreate(H5P_FILE_ACCESS));
#if H5_VERSION_GE(1, 10, 7)
    // HDF5 locks the files it opens, and fails on file systems without locks (often a cluster's);
    // a reader needs no lock there.
    H5Pset_file_locking(access.get(), true, true);
#endif
    file_ = hdf5::owned_file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, access.get()));
    if (file_.valid()) return;
    // HDF5 says only that it failed; the first bytes say why.
    std::FILE* raw = std::fopen(path_.c_str(), "rb");
    if (raw == nullptr) fail(std::strerror(errno));
    std::array<char, 8> start{};
    const std::size_t got = std::fread(start.data(), 1, start.size(), raw);
    std::fclose(raw);
    constexpr std::string_view kHdf5Signature("\x89HDF\r\n\x1a\n", 8);
    if (std::string_view(start.data(), got) == kHdf5Signature) {
      fail("a damaged HDF5 file (truncated?), or one another program is writing");
    }
    fail("not an HDF5 file");
  }

  static bool has_link(hid_t location, const char* name) {
    return H5Lexists(location, name, H5P_DEFAULT) > 0;
  }

  hdf5::Handle open_group(hid_t location, const char* name) const {
    if (!has_link(location, name)) fail(fmt::format("it has no group {}", name));
    hdf5::Handle group = hdf5::owned_group(H5Gopen2(location, name, H5P_DEFAULT));
    if (!group.valid()) fail(fmt::format("{} is not a group", name));
    return group;
  }

  // An attribute of the header, open, with its type and its number of values; nothing if absent.
  struct OpenAttribute {
    hdf5::Handle attribute, type;
    hssize_t count = 0;
  };
  std::optional<OpenAttribute> open_attribute(hid_t header, const char* name) const {
    const htri_t exists = H5Aexists(header, name);
    if (exists < 0) fail(fmt::format("cannot read attribute Header/{}", name));
    if (exists == 0) return std::nullopt;
    OpenAttribute open{hdf5::owned_attribute(H5Aopen(header, name, H5P_DEFAULT)), {}, 0};
    open.type = hdf5::owned_datatype(H5Aget_type(open.attribute.get()));
    const hdf5::Handle space = hdf5::owned_dataspace(H5Aget_space(open.attribute.get()));
    if (!open.attribute.valid() || !open.type.valid() || !space.valid()) {
      fail(fmt::format("cannot read attribute Header/{}", name));
    }
    open.count = H5Sget_simple_extent_npoints(space.get());
    if (open.count <= 0) fail(fmt::format("attribute Header/{} is empty", name));
    return open;
  }

  // The values of Header/`name` as T (std::int64_t, std::uint64_t or double), or nothing if
  // absent. Integers must be stored as integers; a float64 may be stored as either (h5py stores
  // Time = 0 as an integer).
  template <class T>
  std::optional<std::vector<T>> read_numbers(hid_t header, const char* name) const {
    std::optional<OpenAttribute> open = open_attribute(header, name);
    if (!open) return std::nullopt;
    const H5T_class_t type_class = H5Tget_class(open->type.get());
    constexpr bool kInteger = std::is_integral_v<T>;
    if (type_class != H5T_INTEGER && (kInteger || type_class != H5T_FLOAT)) {
      fail(
          fmt::format("attribute Header/{} is not {}", name, kInteger ? "an integer" : "a number"));
    }
    hid_t memory_type = H5T_NATIVE_DOUBLE;
    if constexpr (std::is_same_v<T, std::int64_t>) memory_type = H5T_NATIVE_INT64;
    if constexpr (std::is_same_v<T, std::uint64_t>) memory_type = H5T_NATIVE_UINT64;
    std::vector<T> values(static_cast<std::size_t>(open->count));
    if (H5Aread(open->attribute.get(), memory_type, values.data()) < 0) {
      fail(fmt::format("cannot read attribute Header/{}", name));
    }
    return values;
  }

  template <class T>
  std::optional<T> read_number(hid_t header, const char* name) const {
    const std::optional<std::vector<T>> values = read_numbers<T>(header, name);
    if (!values) return std::nullopt;
    if (values->size() != 1) {
      fail(fmt::format("attribute Header/{} has {} values, expected one", name, values->size()));
    }
    return values->front();
  }

  std::optional<double> read_finite_number(hid_t header, const char* name) const {
    const std::optional<double> value = read_number<double>(header, name);
    if (value && !std::isfinite(*value)) fail(fmt::format("Header/{} is {}", name, *value));
    return value;
  }

  // Variable-length (h5py's str) or fixed-length (GADGET-4's, numpy's bytes) strings.
  std::optional<std::string> read_string(hid_t header, const char* name) const {
    std::optional<OpenAttribute> open = open_attribute(header, name);
    if (!open) return std::nullopt;
    const hid_t type = open->type.get();
    if (H5Tget_class(type) != H5T_STRING || open->count != 1) {
      fail(fmt::format("attribute Header/{} is not a string", name));
    }
    const htri_t variable = H5Tis_variable_str(type);
    if (variable > 0) {
      const hdf5::Handle memory_type = hdf5::owned_datatype(H5Tcopy(H5T_C_S1));
      char* text = nullptr;
      if (!memory_type.valid() || H5Tset_size(memory_type.get(), H5T_VARIABLE) < 0 ||
          H5Tset_cset(memory_type.get(), H5Tget_cset(type)) < 0 ||
          H5Aread(open->attribute.get(), memory_type.get(), &text) < 0) {
        fail(fmt::format("cannot read attribute Header/{}", name));
      }
      std::string value = text != nullptr ? text : "";
      H5free_memory(text);
      return value;
    }
    const std::size_t size = H5Tget_size(type);
    std::string buffer(size, '\0');
    if (variable < 0 || size == 0 || H5Aread(open->attribute.get(), type, buffer.data()) < 0) {
      fail(fmt::format("cannot read attribute Header/{}", name));
    }
    // Null-terminated, null-padded or space-padded.
    buffer.resize(std::strlen(buffer.c_str()));
    if (H5Tget_strpad(type) == H5T_STR_SPACEPAD) buffer.erase(buffer.find_last_not_of(' ') + 1);
    return buffer;
  }

  SnapshotHeader read_header(hid_t header) {
    if (read_string(header, "Format") == kFormatName) {
      const std::optional<std::int64_t> version =
          read_number<std::int64_t>(header, "FormatVersion");
      if (version && *version > kFormatVersion) {
        fail(fmt::format("it has format version {}, newer than this nbody-fair's {}", *version,
                         kFormatVersion));
      }
    }
    const std::optional<std::int64_t> files =
        read_number<std::int64_t>(header, "NumFilesPerSnapshot");
    if (files && *files != 1) {
      fail(fmt::format(
          "it is one of {} files of a snapshot (Header/NumFilesPerSnapshot); nbody-fair reads "
          "single-file snapshots",
          *files));
    }
    const std::optional<std::vector<std::uint64_t>> counts =
        read_numbers<std::uint64_t>(header, "NumPart_ThisFile");
    if (!counts) fail("it has no attribute Header/NumPart_ThisFile");
    if (counts->size() <= kBodyType) {
      fail(fmt::format("Header/NumPart_ThisFile has {} entries, expected one per particle type",
                       counts->size()));
    }
    particle_counts_ = *counts;
    if (const std::optional<std::vector<double>> table =
            read_numbers<double>(header, "MassTable")) {
      if (table->size() <= kBodyType) {
        fail(fmt::format("Header/MassTable has {} entries, expected one per particle type",
                         table->size()));
      }
      mass_table_body_mass_ = (*table)[kBodyType];
      if (!std::isfinite(mass_table_body_mass_) || mass_table_body_mass_ < 0) {
        fail(fmt::format("Header/MassTable[1] is {}; a mass must be finite and not negative",
                         mass_table_body_mass_));
      }
    }

    SnapshotHeader out;
    out.time = read_finite_number(header, "Time").value_or(0.0);
    out.step = read_number<std::int64_t>(header, "Step").value_or(0);
    out.softening = read_finite_number(header, "Softening").value_or(0.0);
    if (out.softening < 0) {
      fail(fmt::format("Header/Softening is {}; it must not be negative", out.softening));
    }
    out.dt = read_finite_number(header, "TimeStep").value_or(0.0);
    out.implementation = read_string(header, "Implementation").value_or("");
    out.precision = read_string(header, "Precision").value_or("");
    out.initial_condition = read_string(header, "InitialCondition").value_or("");
    out.seed = read_number<std::uint64_t>(header, "Seed").value_or(0);
    return out;
  }

  // Gas, stars and the rest are not point masses of the same kind; reading them as bodies would
  // silently change the physics, so such files are refused rather than half read.
  void refuse_other_particle_types() const {
    for (std::size_t type = 0; type < std::max(particle_counts_.size(), kParticleTypes); ++type) {
      if (type == kBodyType) continue;
      std::uint64_t count = type < particle_counts_.size() ? particle_counts_[type] : 0;
      const std::string group_name = fmt::format("PartType{}", type);
      if (count == 0 && has_link(file_.get(), group_name.c_str())) {
        const hdf5::Handle group = open_group(file_.get(), group_name.c_str());
        if (std::optional<OpenDataset> coordinates =
                open_dataset(group.get(), group_name, "Coordinates")) {
          count = coordinates->dims.empty() ? 0 : coordinates->dims[0];
        }
      }
      if (count > 0) {
        fail(
            fmt::format("it holds {} particles of type {} ({}); nbody-fair reads its bodies from "
                        "PartType1 only",
                        count, type, group_name));
      }
    }
  }

  // group_name/name, open, with its shape; nothing if absent.
  std::optional<OpenDataset> open_dataset(hid_t group, std::string_view group_name,
                                          const char* name) const {
    if (!has_link(group, name)) return std::nullopt;
    OpenDataset open{hdf5::owned_dataset(H5Dopen2(group, name, H5P_DEFAULT)), {}};
    if (!open.dataset.valid()) fail(fmt::format("{}/{} is not a dataset", group_name, name));
    const hdf5::Handle space = hdf5::owned_dataspace(H5Dget_space(open.dataset.get()));
    const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (rank < 0) fail(fmt::format("cannot read the shape of {}/{}", group_name, name));
    open.dims.resize(static_cast<std::size_t>(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), open.dims.data(), nullptr) < 0) {
      fail(fmt::format("cannot read the shape of {}/{}", group_name, name));
    }
    return open;
  }

  // PartType1/`name` with shape N x `columns` (columns 0: a vector of N), as float64.
  std::optional<std::vector<double>> read_floats(hid_t group, const char* name, hsize_t n,
                                                 hsize_t columns) const {
    std::optional<OpenDataset> open = open_dataset(group, kBodyGroup, name);
    if (!open) return std::nullopt;
    const std::vector<hsize_t> expected =
        columns == 0 ? std::vector<hsize_t>{n} : std::vector<hsize_t>{n, columns};
    if (open->dims != expected) {
      if (open->dims.size() == expected.size() && (columns == 0 || open->dims[1] == columns)) {
        fail(fmt::format("PartType1/{} holds {} bodies but PartType1/Coordinates holds {}", name,
                         open->dims[0], n));
      }
      fail(fmt::format("PartType1/{} has shape ({}), expected ({})", name,
                       fmt::join(open->dims, ", "), columns == 0 ? "N" : "N, 3"));
    }
    const hdf5::Handle type = hdf5::owned_datatype(H5Dget_type(open->dataset.get()));
    if (!type.valid() || H5Tget_class(type.get()) != H5T_FLOAT) {
      fail(fmt::format("PartType1/{} does not hold floating-point numbers", name));
    }
    std::vector<double> values(static_cast<std::size_t>(n * std::max<hsize_t>(columns, 1)));
    if (H5Dread(open->dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                values.data()) < 0) {
      fail(fmt::format("cannot read PartType1/{} (a damaged file?)", name));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::isfinite(values[i])) continue;
      if (columns == 0) fail(fmt::format("PartType1/{}[{}] is {}", name, i, values[i]));
      fail(fmt::format("PartType1/{}[{}][{}] is {}", name, i / columns, i % columns, values[i]));
    }
    return values;
  }

  PhaseSpaceState read_bodies(hid_t group) const {
    const std::optional<OpenDataset> shape = open_dataset(group, kBodyGroup, "Coordinates");
    if (!shape) fail("it has no dataset PartType1/Coordinates");
    if (shape->dims.size() != 2 || shape->dims[1] != 3) {
      fail(fmt::format("PartType1/Coordinates has shape ({}), expected (N, 3)",
                       fmt::join(shape->dims, ", ")));
    }
    const hsize_t n = shape->dims[0];
    if (n == 0) fail("PartType1/Coordinates holds no bodies (N = 0)");
    if (n > kMaxBodies) {
      fail(fmt::format("PartType1/Coordinates holds {} bodies, more than nbody-fair takes ({})", n,
                       kMaxBodies));
    }
    if (particle_counts_[kBodyType] != n) {
      fail(fmt::format("Header/NumPart_ThisFile[1] is {} but PartType1/Coordinates holds {} bodies",
                       particle_counts_[kBodyType], n));
    }
    if (const std::optional<OpenDataset> ids = open_dataset(group, kBodyGroup, "ParticleIDs")) {
      if (ids->dims != std::vector<hsize_t>{n}) {
        fail(
            fmt::format("PartType1/ParticleIDs has shape ({}) but PartType1/Coordinates holds {} "
                        "bodies",
                        fmt::join(ids->dims, ", "), n));
      }
    }
    const std::vector<double> coordinates = *read_floats(group, "Coordinates", n, 3);
    const std::optional<std::vector<double>> velocities = read_floats(group, "Velocities", n, 3);
    if (!velocities) fail("it has no dataset PartType1/Velocities");
    std::optional<std::vector<double>> masses = read_floats(group, "Masses", n, 0);
    // GADGET's convention: MassTable[1] > 0 is the mass of every body, and Masses is then absent.
    if (!masses) {
      if (mass_table_body_mass_ <= 0) {
        fail(
            "it has no dataset PartType1/Masses and no Header/MassTable[1] > 0 (the mass of every "
            "body when Masses is absent)");
      }
      masses.emplace(n, mass_table_body_mass_);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const double m = (*masses)[i];
      if (m < 0) fail(fmt::format("PartType1/Masses[{}] is {}; a mass must not be negative", i, m));
      if (mass_table_body_mass_ > 0 && m != mass_table_body_mass_) {
        fail(
            fmt::format("PartType1/Masses[{}] is {} but Header/MassTable[1] is {} (GADGET takes "
                        "every body's mass from MassTable when it is not 0)",
                        i, m, mass_table_body_mass_));
      }
    }
    PhaseSpaceState state;
    state.bodies.resize(n);
    state.velocities.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      state.bodies[i] = {coordinates[3 * i], coordinates[3 * i + 1], coordinates[3 * i + 2],
                         (*masses)[i]};
      state.velocities[i] = {(*velocities)[3 * i], (*velocities)[3 * i + 1],
                             (*velocities)[3 * i + 2]};
    }
    return state;
  }

  std::filesystem::path path_;
  hdf5::Handle file_;
  std::vector<std::uint64_t> particle_counts_;
  double mass_table_body_mass_ = 0;
};

}  // namespace

std::optional<std::string> snapshot_io_unavailable_reason() {
  return std::nullopt;
}

void write_snapshot(const std::filesystem::path& path, const SnapshotData& data) {
  const std::size_t n = data.state.bodies.size();
  if (n == 0) throw std::invalid_argument("write_snapshot: a snapshot needs at least one body");
  if (data.state.velocities.size() != n) {
    throw std::invalid_argument("write_snapshot: one velocity per body");
  }
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ignored;
  const std::filesystem::file_status status = std::filesystem::status(folder, ignored);
  if (!std::filesystem::exists(status)) {
    throw UsageError(fmt::format("cannot write snapshot {}: folder {} does not exist", quoted(path),
                                 quoted(folder)));
  }
  if (!std::filesystem::is_directory(status)) {
    throw UsageError(
        fmt::format("cannot write snapshot {}: {} is not a folder", quoted(path), quoted(folder)));
  }
  // Asked before the image is built, which for a large N takes a while; a later failure (a full
  // disk, a read-only file system) is still caught below.
  if (::access(folder.c_str(), W_OK) != 0) {
    throw UsageError(fmt::format("cannot write snapshot {}: folder {} is not writable",
                                 quoted(path), quoted(folder)));
  }
  std::string image;
  {
    const hdf5::QuietErrors quiet;
    image = build_image(path, data);
  }
  try {
    write_file_atomically(path, image);
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("cannot write snapshot {}: {}", quoted(path), e.what()));
  }
}

SnapshotData read_snapshot(const std::filesystem::path& path) {
  const hdf5::QuietErrors quiet;  // first in, last out: the handles close while it is quiet
  SnapshotReader reader(path);
  return reader.read();
}

}  // namespace nbody
