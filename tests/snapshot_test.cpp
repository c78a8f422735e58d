// HDF5 snapshots (nbody/io/snapshot.hpp): a bit-exact float64 round trip, the GADGET-4 layout by
// name and type, files other tools write (float32 data, masses in MassTable, no nbody-fair
// attributes), and every kind of bad file refused with one line that names it. The bad files are
// good snapshots damaged through the HDF5 C API. In a build without HDF5 every test but the one
// for that build skips, saying why.
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/errors.hpp"
#include "nbody/io/snapshot.hpp"
#ifdef NBODY_HAVE_HDF5
#include "nbody/io/hdf5_handles.hpp"
#endif

namespace nbody {
namespace {

namespace fs = std::filesystem;

#define SKIP_WITHOUT_HDF5()                                                            \
  do {                                                                                 \
    if (const auto reason = snapshot_io_unavailable_reason()) GTEST_SKIP() << *reason; \
  } while (false)

// A fresh folder per test, removed afterwards.
class Snapshots : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = fs::temp_directory_path() /
              ("nbody-snapshot-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(folder_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(folder_, ignored);
  }
  const fs::path& folder() const { return folder_; }

 private:
  fs::path folder_;
};

// Finite doubles from random bit patterns: every exponent, subnormals, signed zeros.
double awkward_double(std::mt19937_64& random) {
  for (;;) {
    const double value = std::bit_cast<double>(random());
    if (std::isfinite(value)) return value;
  }
}

SnapshotData awkward_snapshot(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  SnapshotData data;
  data.header = {.time = 1.25,
                 .step = 40,
                 .softening = 0.01,
                 .dt = 1.0 / 32,
                 .implementation = "gpu.tuned",
                 .precision = "f32",
                 .initial_condition = "plummer",
                 .seed = seed};
  const double extremes[] = {
      -0.0, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
      std::numeric_limits<double>::lowest(), std::numeric_limits<double>::min()};
  for (std::size_t i = 0; i < n; ++i) {
    Body<double> b{awkward_double(random), awkward_double(random), awkward_double(random),
                   std::abs(awkward_double(random))};
    if (i < std::size(extremes)) b.x = extremes[i];
    data.state.bodies.push_back(b);
    data.state.velocities.push_back(
        {awkward_double(random), awkward_double(random), awkward_double(random)});
  }
  return data;
}

// The same bits, -0.0 and 0.0 told apart.
void expect_same_bits(double actual, double expected, std::string_view what, std::size_t i) {
  EXPECT_EQ(std::bit_cast<std::uint64_t>(actual), std::bit_cast<std::uint64_t>(expected))
      << what << "[" << i << "]: " << actual << " vs " << expected;
}

void expect_same_state(const PhaseSpaceState& actual, const PhaseSpaceState& expected) {
  ASSERT_EQ(actual.bodies.size(), expected.bodies.size());
  ASSERT_EQ(actual.velocities.size(), expected.velocities.size());
  for (std::size_t i = 0; i < expected.bodies.size(); ++i) {
    expect_same_bits(actual.bodies[i].x, expected.bodies[i].x, "x", i);
    expect_same_bits(actual.bodies[i].y, expected.bodies[i].y, "y", i);
    expect_same_bits(actual.bodies[i].z, expected.bodies[i].z, "z", i);
    expect_same_bits(actual.bodies[i].m, expected.bodies[i].m, "m", i);
    expect_same_bits(actual.velocities[i].x, expected.velocities[i].x, "vx", i);
    expect_same_bits(actual.velocities[i].y, expected.velocities[i].y, "vy", i);
    expect_same_bits(actual.velocities[i].z, expected.velocities[i].z, "vz", i);
  }
}

void expect_same_header(const SnapshotHeader& actual, const SnapshotHeader& expected) {
  EXPECT_EQ(actual.time, expected.time);
  EXPECT_EQ(actual.step, expected.step);
  EXPECT_EQ(actual.softening, expected.softening);
  EXPECT_EQ(actual.dt, expected.dt);
  EXPECT_EQ(actual.implementation, expected.implementation);
  EXPECT_EQ(actual.precision, expected.precision);
  EXPECT_EQ(actual.initial_condition, expected.initial_condition);
  EXPECT_EQ(actual.seed, expected.seed);
}

std::vector<fs::path> files_in(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    files.push_back(entry.path());
  }
  return files;
}

TEST(SnapshotPath, NamesFilesAsGadgetDoes) {
  EXPECT_EQ(snapshot_path("out", 0), fs::path("out") / "snapshot_000.hdf5");
  EXPECT_EQ(snapshot_path("out", 7), fs::path("out") / "snapshot_007.hdf5");
  EXPECT_EQ(snapshot_path("out", 999), fs::path("out") / "snapshot_999.hdf5");
  EXPECT_EQ(snapshot_path("out", 1234), fs::path("out") / "snapshot_1234.hdf5");
  EXPECT_THROW(snapshot_path("out", -1), std::invalid_argument);
}

TEST_F(Snapshots, BuildWithoutHdf5SaysWhyOnOneLine) {
  const std::optional<std::string> reason = snapshot_io_unavailable_reason();
  if (!reason) GTEST_SKIP() << "this build has HDF5";
  EXPECT_FALSE(reason->empty());
  EXPECT_EQ(reason->find('\n'), std::string::npos);
  const fs::path path = folder() / "snapshot_000.hdf5";
  try {
    write_snapshot(path, awkward_snapshot(2, 1));
    FAIL() << "wrote a snapshot without HDF5";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.what(), *reason);
  }
  EXPECT_THROW(read_snapshot(path), UsageError);
  EXPECT_TRUE(files_in(folder()).empty());
}

TEST_F(Snapshots, Float64RoundTripIsBitExactAtAwkwardSizes) {
  SKIP_WITHOUT_HDF5();
  for (std::size_t n : {1, 2, 7, 1000}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const SnapshotData written = awkward_snapshot(n, 1000 + n);
    const fs::path path = snapshot_path(folder(), static_cast<int>(n));
    write_snapshot(path, written);
    const SnapshotData read = read_snapshot(path);
    expect_same_state(read.state, written.state);
    expect_same_header(read.header, written.header);
  }
#ifdef NBODY_HAVE_HDF5
  EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0) << "an HDF5 handle leaked";
#endif
}

TEST_F(Snapshots, HeaderFieldsRoundTrip) {
  SKIP_WITHOUT_HDF5();
  SnapshotData written = awkward_snapshot(3, 5);
  written.header = {.time = -0.1,
                    .step = std::numeric_limits<std::int64_t>::max(),
                    .softening = 1e-300,
                    .dt = std::numeric_limits<double>::denorm_min(),
                    .implementation = "cpu.simd.avx512 \xc3\xa9",  // UTF-8 passes through
                    .precision = "f64",
                    .initial_condition = "uniform_ball",
                    .seed = std::numeric_limits<std::uint64_t>::max()};
  const fs::path path = folder() / "header.hdf5";
  write_snapshot(path, written);
  expect_same_header(read_snapshot(path).header, written.header);

  written.header = {};  // an initial condition written by hand: empty strings, zeros
  write_snapshot(path, written);
  expect_same_header(read_snapshot(path).header, written.header);
}

TEST_F(Snapshots, OverwritingReplacesTheFileWholeAndLeavesNoTemporary) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = snapshot_path(folder(), 0);
  write_snapshot(path, awkward_snapshot(1000, 1));
  const SnapshotData second = awkward_snapshot(7, 2);
  write_snapshot(path, second);
  expect_same_state(read_snapshot(path).state, second.state);
  EXPECT_EQ(files_in(folder()), std::vector<fs::path>{path});
}

// write_snapshot's failures: one line naming the path, and nothing written.
void expect_write_refused(const fs::path& path, std::string_view fragment) {
  try {
    write_snapshot(path, awkward_snapshot(7, 3));
    FAIL() << "wrote " << path;
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(Snapshots, WritingIntoAMissingFolderThrowsAndLeavesNothing) {
  SKIP_WITHOUT_HDF5();
  const fs::path missing = folder() / "missing";
  expect_write_refused(missing / "snapshot_000.hdf5", "does not exist");
  EXPECT_FALSE(fs::exists(missing));
  std::ofstream(folder() / "plain-file") << "not a folder";
  expect_write_refused(folder() / "plain-file" / "snapshot_000.hdf5", "is not a folder");
  EXPECT_EQ(files_in(folder()), std::vector<fs::path>{folder() / "plain-file"});
}

TEST_F(Snapshots, WritingIntoAnUnwritableFolderThrowsAndLeavesNothing) {
  SKIP_WITHOUT_HDF5();
  // Not even root may create a file in /proc.
  expect_write_refused("/proc/snapshot_000.hdf5", "cannot write snapshot");
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only folder; /proc checked only";
  const fs::path locked = folder() / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  expect_write_refused(locked / "snapshot_000.hdf5", "is not writable");
  fs::permissions(locked, fs::perms::owner_all);
  EXPECT_TRUE(files_in(locked).empty());
}

TEST_F(Snapshots, WritingSomethingThatIsNotAStateIsAProgrammingError) {
  SKIP_WITHOUT_HDF5();
  SnapshotData data = awkward_snapshot(3, 4);
  data.state.velocities.pop_back();
  EXPECT_THROW(write_snapshot(folder() / "a.hdf5", data), std::invalid_argument);
  EXPECT_THROW(write_snapshot(folder() / "b.hdf5", SnapshotData{}), std::invalid_argument);
  EXPECT_TRUE(files_in(folder()).empty());
}

#ifdef NBODY_HAVE_HDF5

// Opens a written file for change through the HDF5 C API, to make the files other tools write and
// the damaged files nbody-fair must refuse.
class FileEditor {
 public:
  explicit FileEditor(const fs::path& path)
      : file_(hdf5::owned_file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT))) {
    if (!file_.valid()) throw std::runtime_error("cannot open " + path.string());
  }

  void remove(const char* name) { check(H5Ldelete(file_.get(), name, H5P_DEFAULT), name); }

  void create_group(const char* name) {
    hdf5::owned_group(H5Gcreate2(file_.get(), name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  }

  // Replaces (or creates) dataset `name` with `values` of shape `dims`, stored as `file_type`.
  template <class T>
  void replace_dataset(const char* name, std::vector<hsize_t> dims, const std::vector<T>& values,
                       hid_t file_type, hid_t memory_type) {
    if (H5Lexists(file_.get(), name, H5P_DEFAULT) > 0) remove(name);
    const hdf5::Handle space = hdf5::owned_dataspace(
        H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    const hdf5::Handle dataset = hdf5::owned_dataset(H5Dcreate2(
        file_.get(), name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    check(dataset.get(), name);
    if (!values.empty()) {
      check(H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
            name);
    }
  }

  std::vector<double> read_doubles(const char* name, std::size_t count) {
    const hdf5::Handle dataset = hdf5::owned_dataset(H5Dopen2(file_.get(), name, H5P_DEFAULT));
    std::vector<double> values(count);
    check(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          name);
    return values;
  }

  // Replaces (or creates) attribute Header/`name` with `values` (one value: a scalar).
  template <class T>
  void replace_header_attribute(const char* name, const std::vector<T>& values, hid_t type) {
    const hdf5::Handle header = hdf5::owned_group(H5Gopen2(file_.get(), "Header", H5P_DEFAULT));
    if (H5Aexists(header.get(), name) > 0) check(H5Adelete(header.get(), name), name);
    const hsize_t count = values.size();
    const hdf5::Handle space = hdf5::owned_dataspace(
        count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr));
    const hdf5::Handle attribute = hdf5::owned_attribute(
        H5Acreate2(header.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT));
    check(H5Awrite(attribute.get(), type, values.data()), name);
  }

  void remove_header_attribute(const char* name) {
    const hdf5::Handle header = hdf5::owned_group(H5Gopen2(file_.get(), "Header", H5P_DEFAULT));
    check(H5Adelete(header.get(), name), name);
  }

  // A fixed-length, space-padded string, as GADGET-4 and numpy bytes store them.
  void replace_header_fixed_string(const char* name, const std::string& value) {
    const hdf5::Handle header = hdf5::owned_group(H5Gopen2(file_.get(), "Header", H5P_DEFAULT));
    if (H5Aexists(header.get(), name) > 0) check(H5Adelete(header.get(), name), name);
    const hdf5::Handle type = hdf5::owned_datatype(H5Tcopy(H5T_C_S1));
    H5Tset_size(type.get(), value.size() + 3);
    H5Tset_strpad(type.get(), H5T_STR_SPACEPAD);
    const hdf5::Handle space = hdf5::owned_dataspace(H5Screate(H5S_SCALAR));
    const hdf5::Handle attribute = hdf5::owned_attribute(
        H5Acreate2(header.get(), name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
    const std::string padded = value + "   ";
    check(H5Awrite(attribute.get(), type.get(), padded.data()), name);
  }

 private:
  static void check(std::int64_t status, const char* what) {
    if (status < 0) throw std::runtime_error(std::string("HDF5 failed at ") + what);
  }

  hdf5::Handle file_;
};

// The attribute or dataset `name` of `file`: its type class, size in bytes and shape.
struct Stored {
  H5T_class_t type_class;
  std::size_t size;
  H5T_sign_t sign;
  std::vector<hsize_t> dims;
};

Stored stored_attribute(const fs::path& file, const char* name) {
  const hdf5::Handle f = hdf5::owned_file(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const hdf5::Handle header = hdf5::owned_group(H5Gopen2(f.get(), "Header", H5P_DEFAULT));
  const hdf5::Handle attribute = hdf5::owned_attribute(H5Aopen(header.get(), name, H5P_DEFAULT));
  if (!attribute.valid()) return {H5T_NO_CLASS, 0, H5T_SGN_ERROR, {}};
  const hdf5::Handle type = hdf5::owned_datatype(H5Aget_type(attribute.get()));
  const hdf5::Handle space = hdf5::owned_dataspace(H5Aget_space(attribute.get()));
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  const H5T_class_t type_class = H5Tget_class(type.get());
  return {type_class, H5Tget_size(type.get()),
          type_class == H5T_INTEGER ? H5Tget_sign(type.get()) : H5T_SGN_ERROR, dims};
}

Stored stored_dataset(const fs::path& file, const char* name) {
  const hdf5::Handle f = hdf5::owned_file(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const hdf5::Handle dataset = hdf5::owned_dataset(H5Dopen2(f.get(), name, H5P_DEFAULT));
  if (!dataset.valid()) return {H5T_NO_CLASS, 0, H5T_SGN_ERROR, {}};
  const hdf5::Handle type = hdf5::owned_datatype(H5Dget_type(dataset.get()));
  const hdf5::Handle space = hdf5::owned_dataspace(H5Dget_space(dataset.get()));
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  const H5T_class_t type_class = H5Tget_class(type.get());
  return {type_class, H5Tget_size(type.get()),
          type_class == H5T_INTEGER ? H5Tget_sign(type.get()) : H5T_SGN_ERROR, dims};
}

template <class T>
std::vector<T> attribute_values(const fs::path& file, const char* name, hid_t memory_type,
                                std::size_t count) {
  const hdf5::Handle f = hdf5::owned_file(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const hdf5::Handle header = hdf5::owned_group(H5Gopen2(f.get(), "Header", H5P_DEFAULT));
  const hdf5::Handle attribute = hdf5::owned_attribute(H5Aopen(header.get(), name, H5P_DEFAULT));
  std::vector<T> values(count);
  H5Aread(attribute.get(), memory_type, values.data());
  return values;
}

void expect_stored(const Stored& stored, H5T_class_t type_class, std::size_t size,
                   std::vector<hsize_t> dims, const char* name) {
  EXPECT_EQ(stored.type_class, type_class) << name;
  EXPECT_EQ(stored.size, size) << name;
  EXPECT_EQ(stored.dims, dims) << name;
}

// docs/snapshot-format.md's table, checked by name, type and shape.
TEST_F(Snapshots, WrittenLayoutIsTheDocumentedGadgetOne) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = snapshot_path(folder(), 0);
  const SnapshotData written = awkward_snapshot(7, 9);
  write_snapshot(path, written);
  using Dims = std::vector<hsize_t>;
  for (const char* name : {"NumPart_ThisFile", "NumPart_Total"}) {
    const Stored stored = stored_attribute(path, name);
    expect_stored(stored, H5T_INTEGER, 8, Dims{6}, name);
    EXPECT_EQ(stored.sign, H5T_SGN_NONE) << name;
    EXPECT_EQ((attribute_values<std::uint64_t>(path, name, H5T_NATIVE_UINT64, 6)),
              (std::vector<std::uint64_t>{0, 7, 0, 0, 0, 0}))
        << name;
  }
  expect_stored(stored_attribute(path, "NumPart_Total_HighWord"), H5T_INTEGER, 4, Dims{6},
                "NumPart_Total_HighWord");
  expect_stored(stored_attribute(path, "MassTable"), H5T_FLOAT, 8, Dims{6}, "MassTable");
  EXPECT_EQ(attribute_values<double>(path, "MassTable", H5T_NATIVE_DOUBLE, 6),
            std::vector<double>(6, 0.0));
  for (const char* name : {"Time", "Redshift", "BoxSize", "Softening", "TimeStep"}) {
    expect_stored(stored_attribute(path, name), H5T_FLOAT, 8, Dims{}, name);
  }
  EXPECT_EQ(attribute_values<double>(path, "Redshift", H5T_NATIVE_DOUBLE, 1)[0], 0.0);
  EXPECT_EQ(attribute_values<double>(path, "BoxSize", H5T_NATIVE_DOUBLE, 1)[0], 0.0);
  expect_stored(stored_attribute(path, "NumFilesPerSnapshot"), H5T_INTEGER, 4, Dims{},
                "NumFilesPerSnapshot");
  expect_stored(stored_attribute(path, "FormatVersion"), H5T_INTEGER, 4, Dims{}, "FormatVersion");
  EXPECT_EQ(attribute_values<std::int32_t>(path, "FormatVersion", H5T_NATIVE_INT32, 1)[0], 1);
  expect_stored(stored_attribute(path, "Step"), H5T_INTEGER, 8, Dims{}, "Step");
  expect_stored(stored_attribute(path, "Seed"), H5T_INTEGER, 8, Dims{}, "Seed");
  EXPECT_EQ(stored_attribute(path, "Seed").sign, H5T_SGN_NONE);
  for (const char* name : {"Format", "Implementation", "Precision", "InitialCondition"}) {
    EXPECT_EQ(stored_attribute(path, name).type_class, H5T_STRING) << name;
  }
  expect_stored(stored_dataset(path, "PartType1/Coordinates"), H5T_FLOAT, 8, Dims{7, 3},
                "Coordinates");
  expect_stored(stored_dataset(path, "PartType1/Velocities"), H5T_FLOAT, 8, Dims{7, 3},
                "Velocities");
  expect_stored(stored_dataset(path, "PartType1/Masses"), H5T_FLOAT, 8, Dims{7}, "Masses");
  const Stored ids = stored_dataset(path, "PartType1/ParticleIDs");
  expect_stored(ids, H5T_INTEGER, 8, Dims{7}, "ParticleIDs");
  EXPECT_EQ(ids.sign, H5T_SGN_NONE);
  // Nothing else: no other particle type, no other group.
  const hdf5::Handle f = hdf5::owned_file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  H5G_info_t root{};
  H5Gget_info(f.get(), &root);
  EXPECT_EQ(root.nlinks, 2u);
}

// A GADGET-4 file as another tool writes it: float32 data, no nbody-fair attributes, Time stored
// as an integer, a fixed-length string.
TEST_F(Snapshots, ReadsFilesOtherToolsWrite) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = folder() / "ic.hdf5";
  const SnapshotData written = awkward_snapshot(2, 6);
  write_snapshot(path, written);
  const std::vector<float> coordinates{0.5f, -1.25f, 3.0f, 1e-3f, 2e5f, -7.0f};
  const std::vector<float> velocities{0.1f, 0.2f, 0.3f, -0.4f, -0.5f, -0.6f};
  {
    FileEditor editor(path);
    editor.replace_dataset("PartType1/Coordinates", {2, 3}, coordinates, H5T_IEEE_F32LE,
                           H5T_NATIVE_FLOAT);
    editor.replace_dataset("PartType1/Velocities", {2, 3}, velocities, H5T_IEEE_F32LE,
                           H5T_NATIVE_FLOAT);
    editor.remove("PartType1/ParticleIDs");
    for (const char* name : {"Format", "FormatVersion", "Step", "Softening", "TimeStep",
                             "Implementation", "Precision", "Seed", "NumPart_Total_HighWord"}) {
      editor.remove_header_attribute(name);
    }
    editor.replace_header_attribute("Time", std::vector<std::int64_t>{3}, H5T_NATIVE_INT64);
    editor.replace_header_fixed_string("InitialCondition", "from MUSIC");
    editor.create_group("PartType0");  // present but empty, as GADGET writes it: accepted
  }
  const SnapshotData read = read_snapshot(path);
  ASSERT_EQ(read.state.bodies.size(), 2u);
  EXPECT_EQ(read.state.bodies[1].x, 1e-3f);  // float32 to float64 is exact
  EXPECT_EQ(read.state.bodies[1].y, 2e5f);
  EXPECT_EQ(read.state.velocities[1].z, -0.6f);
  EXPECT_EQ(read.state.bodies[0].m, written.state.bodies[0].m);
  EXPECT_EQ(read.header.time, 3.0);
  EXPECT_EQ(read.header.initial_condition, "from MUSIC");
  EXPECT_EQ(read.header.step, 0);
  EXPECT_EQ(read.header.softening, 0.0);
  EXPECT_EQ(read.header.implementation, "");
}

// GADGET's convention: MassTable[1] > 0 gives every body's mass and Masses is then absent.
TEST_F(Snapshots, MassTableGivesEveryBodysMassWhenMassesIsAbsent) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = folder() / "ic.hdf5";
  write_snapshot(path, awkward_snapshot(7, 7));
  {
    FileEditor editor(path);
    editor.remove("PartType1/Masses");
    editor.replace_header_attribute("MassTable", std::vector<double>{0, 0.125, 0, 0, 0, 0},
                                    H5T_NATIVE_DOUBLE);
  }
  const SnapshotData read = read_snapshot(path);
  ASSERT_EQ(read.state.bodies.size(), 7u);
  for (const Body<double>& b : read.state.bodies) EXPECT_EQ(b.m, 0.125);
  // Both, agreeing: accepted.
  {
    FileEditor editor(path);
    editor.replace_dataset("PartType1/Masses", {7}, std::vector<double>(7, 0.125), H5T_IEEE_F64LE,
                           H5T_NATIVE_DOUBLE);
  }
  EXPECT_EQ(read_snapshot(path).state.bodies[6].m, 0.125);
}

// Every HDF5 object read_snapshot and write_snapshot open is closed again, error paths included.
void expect_no_open_hdf5_objects() {
  EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0) << "an HDF5 handle leaked";
}

// read_snapshot's refusals: UsageError, one line, naming the file and the fragment; HDF5 prints
// nothing of its own, and nothing is left open.
void expect_read_refused(const fs::path& path, std::string_view fragment) {
  ::testing::internal::CaptureStderr();
  try {
    read_snapshot(path);
    ::testing::internal::GetCapturedStderr();
    ADD_FAILURE() << "read " << path << " without complaint (expected \"" << fragment << "\")";
    return;
  } catch (const UsageError& e) {
    const std::string printed = ::testing::internal::GetCapturedStderr();
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(printed, "") << "HDF5 printed its error stack";
  }
  expect_no_open_hdf5_objects();
}

// A fresh good snapshot of 7 bodies at `name`, for damaging.
fs::path good_snapshot(const fs::path& folder, const std::string& name) {
  const fs::path path = folder / name;
  write_snapshot(path, awkward_snapshot(7, 8));
  return path;
}

TEST_F(Snapshots, RefusesFilesThatAreNotThereOrNotHdf5) {
  SKIP_WITHOUT_HDF5();
  expect_read_refused(folder() / "absent.hdf5", "no such file");
  expect_read_refused(folder(), "it is a folder");
  std::ofstream(folder() / "garbage.hdf5") << "x,y,z,m\n1,2,3,4\n";
  expect_read_refused(folder() / "garbage.hdf5", "not an HDF5 file");
  std::ofstream(folder() / "empty.hdf5").close();
  expect_read_refused(folder() / "empty.hdf5", "not an HDF5 file");
  const fs::path truncated = folder() / "truncated.hdf5";
  write_snapshot(truncated, awkward_snapshot(1000, 1));
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  expect_read_refused(truncated, "damaged HDF5 file");
}

TEST_F(Snapshots, RefusesMissingGroupsDatasetsAndAttributes) {
  SKIP_WITHOUT_HDF5();
  struct Case {
    const char* removed;
    const char* fragment;
  };
  for (const Case& c : {Case{"PartType1", "no group PartType1"}, Case{"Header", "no group Header"},
                        Case{"PartType1/Coordinates", "no dataset PartType1/Coordinates"},
                        Case{"PartType1/Velocities", "no dataset PartType1/Velocities"},
                        Case{"PartType1/Masses", "no dataset PartType1/Masses"}}) {
    const fs::path path = good_snapshot(folder(), "missing.hdf5");
    FileEditor(path).remove(c.removed);
    SCOPED_TRACE(c.removed);
    expect_read_refused(path, c.fragment);
  }
  const fs::path path = good_snapshot(folder(), "no-counts.hdf5");
  FileEditor(path).remove_header_attribute("NumPart_ThisFile");
  expect_read_refused(path, "no attribute Header/NumPart_ThisFile");
}

TEST_F(Snapshots, RefusesShapesThatDisagree) {
  SKIP_WITHOUT_HDF5();
  const std::vector<double> six(6, 1.0), twenty_one(21, 1.0), fourteen(14, 1.0);
  const auto damaged = [&](const char* dataset, std::vector<hsize_t> dims,
                           const std::vector<double>& values) {
    const fs::path path = good_snapshot(folder(), "shape.hdf5");
    FileEditor(path).replace_dataset(dataset, std::move(dims), values, H5T_IEEE_F64LE,
                                     H5T_NATIVE_DOUBLE);
    return path;
  };
  expect_read_refused(damaged("PartType1/Masses", {6}, six),
                      "PartType1/Masses holds 6 bodies but PartType1/Coordinates holds 7");
  expect_read_refused(damaged("PartType1/Velocities", {6, 3}, std::vector<double>(18, 0.0)),
                      "PartType1/Velocities holds 6 bodies but PartType1/Coordinates holds 7");
  expect_read_refused(damaged("PartType1/Coordinates", {7, 2}, fourteen),
                      "PartType1/Coordinates has shape (7, 2), expected (N, 3)");
  expect_read_refused(damaged("PartType1/Coordinates", {21}, twenty_one),
                      "PartType1/Coordinates has shape (21), expected (N, 3)");
  expect_read_refused(damaged("PartType1/Masses", {7, 1}, std::vector<double>(7, 1.0)),
                      "PartType1/Masses has shape (7, 1), expected (N)");
  // The header's count disagreeing with the data.
  const fs::path counts = good_snapshot(folder(), "counts.hdf5");
  FileEditor(counts).replace_header_attribute(
      "NumPart_ThisFile", std::vector<std::uint64_t>{0, 8, 0, 0, 0, 0}, H5T_NATIVE_UINT64);
  expect_read_refused(counts,
                      "Header/NumPart_ThisFile[1] is 8 but PartType1/Coordinates holds 7 bodies");
  const fs::path ids = good_snapshot(folder(), "ids.hdf5");
  FileEditor(ids).replace_dataset("PartType1/ParticleIDs", {5}, std::vector<std::uint64_t>(5, 0),
                                  H5T_STD_U64LE, H5T_NATIVE_UINT64);
  expect_read_refused(ids, "PartType1/ParticleIDs has shape (5)");
}

TEST_F(Snapshots, RefusesNoBodies) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = good_snapshot(folder(), "empty.hdf5");
  {
    FileEditor editor(path);
    const std::vector<double> none;
    editor.replace_dataset("PartType1/Coordinates", {0, 3}, none, H5T_IEEE_F64LE,
                           H5T_NATIVE_DOUBLE);
    editor.replace_dataset("PartType1/Velocities", {0, 3}, none, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    editor.replace_dataset("PartType1/Masses", {0}, none, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    editor.replace_header_attribute("NumPart_ThisFile", std::vector<std::uint64_t>(6, 0),
                                    H5T_NATIVE_UINT64);
  }
  expect_read_refused(path, "N = 0");
}

TEST_F(Snapshots, RefusesNonFiniteValuesNamingDatasetAndIndex) {
  SKIP_WITHOUT_HDF5();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* dataset;
    std::vector<hsize_t> dims;
    std::size_t index;
    double value;
    const char* fragment;
  };
  for (const Case& c :
       {Case{"PartType1/Coordinates", {7, 3}, 3 * 5 + 1, nan, "PartType1/Coordinates[5][1] is nan"},
        Case{"PartType1/Velocities", {7, 3}, 20, -inf, "PartType1/Velocities[6][2] is -inf"},
        Case{"PartType1/Masses", {7}, 0, inf, "PartType1/Masses[0] is inf"}}) {
    SCOPED_TRACE(c.fragment);
    const fs::path path = good_snapshot(folder(), "nonfinite.hdf5");
    {
      FileEditor editor(path);
      std::vector<double> values = editor.read_doubles(c.dataset, c.dims.size() == 2 ? 21 : 7);
      values[c.index] = c.value;
      editor.replace_dataset(c.dataset, c.dims, values, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    }
    expect_read_refused(path, c.fragment);
  }
  const fs::path time = good_snapshot(folder(), "time.hdf5");
  FileEditor(time).replace_header_attribute("Time", std::vector<double>{nan}, H5T_NATIVE_DOUBLE);
  expect_read_refused(time, "Header/Time is nan");
}

TEST_F(Snapshots, RefusesNegativeMasses) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = good_snapshot(folder(), "negative.hdf5");
  {
    FileEditor editor(path);
    std::vector<double> masses(7, 1.0 / 7);
    masses[4] = -0.5;
    editor.replace_dataset("PartType1/Masses", {7}, masses, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  }
  expect_read_refused(path, "PartType1/Masses[4] is -0.5; a mass must not be negative");
  const fs::path table = good_snapshot(folder(), "table.hdf5");
  FileEditor(table).replace_header_attribute("MassTable", std::vector<double>{0, -1, 0, 0, 0, 0},
                                             H5T_NATIVE_DOUBLE);
  expect_read_refused(table, "Header/MassTable[1] is -1");
}

TEST_F(Snapshots, RefusesInconsistentMassConventions) {
  SKIP_WITHOUT_HDF5();
  const fs::path path = good_snapshot(folder(), "masses.hdf5");
  // Masses present (awkward values) and a MassTable[1] that says otherwise.
  FileEditor(path).replace_header_attribute("MassTable", std::vector<double>{0, 0.5, 0, 0, 0, 0},
                                            H5T_NATIVE_DOUBLE);
  expect_read_refused(path, "but Header/MassTable[1] is 0.5");
  const fs::path zero = good_snapshot(folder(), "zero.hdf5");
  FileEditor(zero).remove("PartType1/Masses");  // and MassTable[1] is 0
  expect_read_refused(zero, "no Header/MassTable[1] > 0");
}

TEST_F(Snapshots, RefusesOtherParticleTypesAndMultiFileSnapshots) {
  SKIP_WITHOUT_HDF5();
  const fs::path gas = good_snapshot(folder(), "gas.hdf5");
  FileEditor(gas).replace_header_attribute(
      "NumPart_ThisFile", std::vector<std::uint64_t>{5, 7, 0, 0, 0, 0}, H5T_NATIVE_UINT64);
  expect_read_refused(gas, "holds 5 particles of type 0");
  // Stars present in the data but not counted in the header.
  const fs::path stars = good_snapshot(folder(), "stars.hdf5");
  {
    FileEditor editor(stars);
    editor.create_group("PartType4");
    editor.replace_dataset("PartType4/Coordinates", {2, 3}, std::vector<double>(6, 0.0),
                           H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  }
  expect_read_refused(stars, "holds 2 particles of type 4 (PartType4)");
  const fs::path split = good_snapshot(folder(), "snapshot_000.0.hdf5");
  FileEditor(split).replace_header_attribute("NumFilesPerSnapshot", std::vector<std::int32_t>{4},
                                             H5T_NATIVE_INT32);
  expect_read_refused(split, "one of 4 files of a snapshot");
}

TEST_F(Snapshots, RefusesWrongTypesAndNewerFormats) {
  SKIP_WITHOUT_HDF5();
  const fs::path integers = good_snapshot(folder(), "integers.hdf5");
  FileEditor(integers).replace_dataset("PartType1/Coordinates", {7, 3},
                                       std::vector<std::int64_t>(21, 1), H5T_STD_I64LE,
                                       H5T_NATIVE_INT64);
  expect_read_refused(integers, "PartType1/Coordinates does not hold floating-point numbers");
  const fs::path step = good_snapshot(folder(), "step.hdf5");
  FileEditor(step).replace_header_attribute("Step", std::vector<double>{1.5}, H5T_NATIVE_DOUBLE);
  expect_read_refused(step, "attribute Header/Step is not an integer");
  const fs::path newer = good_snapshot(folder(), "newer.hdf5");
  FileEditor(newer).replace_header_attribute("FormatVersion", std::vector<std::int32_t>{2},
                                             H5T_NATIVE_INT32);
  expect_read_refused(newer, "format version 2, newer than this nbody-fair's 1");
}

#endif  // NBODY_HAVE_HDF5

}  // namespace
}  // namespace nbody
