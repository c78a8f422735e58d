// The MPI layer (distributed/include/nbody/distributed/mpi.hpp), run under mpirun on 2 or more
// ranks (tests/mpirun.sh): the in-place all-gather of slices, positions-only included, the
// reductions and broadcasts, and MPI errors turned into exceptions. Every rank runs every test;
// rank 0 prints, the others their failures alone.
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mpi_test_support.hpp"
#include "nbody/bodies.hpp"
#include "nbody/distributed/mpi.hpp"

namespace nbody::distributed {
namespace {

class Mpi : public ::testing::Test {
 public:
  static Communicator* world;  // the session's, set by main for the tests' lifetime
};
Communicator* Mpi::world = nullptr;

std::vector<TargetRange> slices_of(std::size_t n, int ranks) {
  std::vector<TargetRange> slices;
  for (int r = 0; r < ranks; ++r) slices.push_back(balanced_slice(n, r, ranks));
  return slices;
}

TEST_F(Mpi, RunsOnSeveralRanks) {
  EXPECT_GE(world->size(), 2) << "run this test under mpirun -np 2 (tests/mpirun.sh)";
}

// Every rank writes its slice's positions; the masses, which every rank already has, stay as
// each rank had them: only x, y, z travel.
TEST_F(Mpi, AllGathersPositionsOfBodiesInPlace) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    const std::vector<TargetRange> slices = slices_of(n, world->size());
    std::vector<Body<float>> bodies(n, Body<float>{-1, -1, -1, 0});
    for (std::size_t i = 0; i < n; ++i) bodies[i].m = static_cast<float>(i);  // everywhere
    const TargetRange mine = slices[static_cast<std::size_t>(world->rank())];
    for (std::size_t i = mine.begin; i < mine.end; ++i) {
      bodies[i] = {static_cast<float>(i) + 0.5f, static_cast<float>(world->rank()), 3.0f,
                   static_cast<float>(i)};
    }
    const Datatype positions(value_type<float>(), 3, sizeof(Body<float>));
    EXPECT_EQ(positions.bytes(), 12u);
    world->all_gather_slices(bodies.data(), positions, slices);
    for (int r = 0; r < world->size(); ++r) {
      for (std::size_t i = slices[static_cast<std::size_t>(r)].begin;
           i < slices[static_cast<std::size_t>(r)].end; ++i) {
        EXPECT_EQ(bodies[i].x, static_cast<float>(i) + 0.5f) << "N " << n << " body " << i;
        EXPECT_EQ(bodies[i].y, static_cast<float>(r)) << "N " << n << " body " << i;
        EXPECT_EQ(bodies[i].z, 3.0f);
        EXPECT_EQ(bodies[i].m, static_cast<float>(i));
      }
    }
  }
}

TEST_F(Mpi, AllGathersWholeVectorsInPlace) {
  const std::size_t n = 31;
  const std::vector<TargetRange> slices = slices_of(n, world->size());
  std::vector<Vec3<double>> values(n, Vec3<double>{0, 0, 0});
  const TargetRange mine = slices[static_cast<std::size_t>(world->rank())];
  for (std::size_t i = mine.begin; i < mine.end; ++i) {
    values[i] = {1.0 / static_cast<double>(i + 1), -static_cast<double>(i), 1e300};
  }
  const Datatype vectors(value_type<double>(), 3, sizeof(Vec3<double>));
  world->all_gather_slices(values.data(), vectors, slices);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(values[i].x, 1.0 / static_cast<double>(i + 1));
    EXPECT_EQ(values[i].y, -static_cast<double>(i));
    EXPECT_EQ(values[i].z, 1e300);
  }
}

TEST_F(Mpi, ReducesBroadcastsAndGathersStrings) {
  std::vector<double> values = {static_cast<double>(world->rank()),
                                -static_cast<double>(world->rank())};
  world->max_in_place(values);
  EXPECT_EQ(values[0], world->size() - 1);
  EXPECT_EQ(values[1], 0.0);

  std::string text = world->rank() == world->size() - 1 ? "from the last rank" : "";
  world->broadcast(text, world->size() - 1);
  EXPECT_EQ(text, "from the last rank");

  const std::vector<std::string> all = world->all_strings(std::string(world->rank(), 'x'));
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world->size()));
  for (int r = 0; r < world->size(); ++r) {
    EXPECT_EQ(all[static_cast<std::size_t>(r)], std::string(r, 'x'));
  }
}

// Another library's opaque handle (NCCL's unique id: 128 bytes, zeros and all) from one rank to
// every rank, byte for byte, its count included; from the last rank too, and an empty one.
TEST_F(Mpi, BroadcastsOpaqueBytes) {
  for (const int root : {0, world->size() - 1}) {
    for (const std::size_t count : {std::size_t{128}, std::size_t{0}, std::size_t{3}}) {
      std::vector<std::byte> bytes;
      if (world->rank() == root) {
        for (std::size_t i = 0; i < count; ++i)
          bytes.push_back(static_cast<std::byte>(i * 37 % 256));
        if (count > 2) bytes[1] = std::byte{0};
      } else {
        bytes.assign(5, std::byte{0xFF});  // what was there is replaced, count and all
      }
      world->broadcast(bytes, root);
      ASSERT_EQ(bytes.size(), count) << "root " << root;
      for (std::size_t i = 0; i < count; ++i) {
        const std::byte want =
            i == 1 && count > 2 ? std::byte{0} : static_cast<std::byte>(i * 37 % 256);
        EXPECT_EQ(bytes[i], want) << "root " << root << " byte " << i;
      }
    }
  }
}

// The reduction with a time limit: every rank takes part, so it completes, as max_in_place.
TEST_F(Mpi, ReducesWithinATimeLimitWhereEveryRankTakesPart) {
  std::vector<double> values = {static_cast<double>(world->rank()), 1.5};
  EXPECT_TRUE(world->max_in_place_within(values, 60));
  EXPECT_EQ(values[0], world->size() - 1);
  EXPECT_EQ(values[1], 1.5);
}

TEST_F(Mpi, ErrorsBecomeExceptionsWithMpisWords) {
  EXPECT_NO_THROW(check_mpi(MPI_SUCCESS, "MPI_Nothing"));
  try {
    check_mpi(MPI_ERR_COUNT, "MPI_Something");
    FAIL() << "no exception";
  } catch (const MpiError& e) {
    EXPECT_NE(std::string(e.what()).find("MPI_Something failed: "), std::string::npos) << e.what();
  }
  // A slice list that does not match the ranks is refused before any message is sent.
  const Datatype vectors(value_type<double>(), 3, sizeof(Vec3<double>));
  std::vector<Vec3<double>> values(4);
  const std::vector<TargetRange> too_few(static_cast<std::size_t>(world->size()) - 1);
  EXPECT_THROW(world->all_gather_slices(values.data(), vectors, too_few), MpiError);
}

}  // namespace
}  // namespace nbody::distributed

int main(int argc, char** argv) {
  nbody::distributed::MpiSession session(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  nbody::distributed::Mpi::world = &session.world();
  nbody::testing::print_failures_of_every_rank(session.world().rank());
  return RUN_ALL_TESTS();
}
