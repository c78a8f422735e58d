#include "nbody/distributed/mpi.hpp"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

namespace nbody::distributed {

void check_mpi(int result, std::string_view call) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(result, text, &length) != MPI_SUCCESS) length = 0;
  throw MpiError(fmt::format("{} failed: {}", call,
                             length > 0 ? std::string(text, static_cast<std::size_t>(length))
                                        : fmt::format("MPI error {}", result)));
}

namespace {

int as_count(std::size_t count, std::string_view what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw MpiError(fmt::format("{}: {} is more than MPI counts (int) hold", what, count));
  }
  return static_cast<int>(count);
}

}  // namespace

Datatype::Datatype(MPI_Datatype value, int values, std::size_t extent) {
  int value_size = 0;
  check_mpi(MPI_Type_size(value, &value_size), "MPI_Type_size");
  bytes_ = static_cast<std::size_t>(values) * static_cast<std::size_t>(value_size);
  MPI_Datatype contiguous = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(values, value, &contiguous), "MPI_Type_contiguous");
  const int resized = MPI_Type_create_resized(contiguous, 0, static_cast<MPI_Aint>(extent), &type_);
  MPI_Type_free(&contiguous);  // the resized type keeps what it needs
  check_mpi(resized, "MPI_Type_create_resized");
  if (const int committed = MPI_Type_commit(&type_); committed != MPI_SUCCESS) {
    MPI_Type_free(&type_);
    check_mpi(committed, "MPI_Type_commit");
  }
}

Datatype::~Datatype() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

Communicator::Communicator(MPI_Comm parent) {
  check_mpi(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

Communicator::~Communicator() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void Communicator::all_gather_slices(void* records, const Datatype& type,
                                     std::span<const TargetRange> slices) {
  if (slices.size() != static_cast<std::size_t>(size_)) {
    throw MpiError(fmt::format("all_gather_slices: {} slices for {} ranks", slices.size(), size_));
  }
  std::vector<int> counts(slices.size()), displacements(slices.size());
  for (std::size_t r = 0; r < slices.size(); ++r) {
    counts[r] = as_count(slices[r].size(), "bodies of one rank");
    displacements[r] = as_count(slices[r].begin, "first body of a rank");
  }
  check_mpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, records, counts.data(),
                           displacements.data(), type.get(), comm_),
            "MPI_Allgatherv");
}

void Communicator::max_in_place(std::span<double> values) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_count(values.size(), "values"),
                          MPI_DOUBLE, MPI_MAX, comm_),
            "MPI_Allreduce");
}

void Communicator::sum_in_place(std::span<double> values) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_count(values.size(), "values"),
                          MPI_DOUBLE, MPI_SUM, comm_),
            "MPI_Allreduce");
}

bool Communicator::max_in_place_within(std::span<double> values, double seconds) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data(), as_count(values.size(), "values"),
                           MPI_DOUBLE, MPI_MAX, comm_, &request),
            "MPI_Iallreduce");
  // Polled, sleeping in between, rather than MPI_Wait, which keeps a core busy while it waits.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return true;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
        seconds) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::unique_ptr<Communicator> Communicator::host_ranks() {
  MPI_Comm host = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host),
            "MPI_Comm_split_type");
  try {
    auto ranks = std::make_unique<Communicator>(host);
    MPI_Comm_free(&host);
    return ranks;
  } catch (...) {
    MPI_Comm_free(&host);
    throw;
  }
}

void Communicator::broadcast(std::string& text, int root) {
  unsigned long long length = text.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm_), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(length));
  check_mpi(MPI_Bcast(text.data(), as_count(text.size(), "characters"), MPI_CHAR, root, comm_),
            "MPI_Bcast");
}

void Communicator::broadcast(std::vector<std::byte>& bytes, int root) {
  unsigned long long length = bytes.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm_), "MPI_Bcast");
  bytes.resize(static_cast<std::size_t>(length));
  check_mpi(MPI_Bcast(bytes.data(), as_count(bytes.size(), "bytes"), MPI_BYTE, root, comm_),
            "MPI_Bcast");
}

std::vector<std::string> Communicator::all_strings(const std::string& text) {
  int length = as_count(text.size(), "characters");
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  std::vector<int> displacements(lengths.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = as_count(total, "characters");
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::string all(total, '\0');
  check_mpi(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(),
                           displacements.data(), MPI_CHAR, comm_),
            "MPI_Allgatherv");
  std::vector<std::string> strings;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    strings.push_back(all.substr(static_cast<std::size_t>(displacements[r]),
                                 static_cast<std::size_t>(lengths[r])));
  }
  return strings;
}

void Communicator::abort(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; should it, the process still ends
}

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  try {
    if (provided < MPI_THREAD_FUNNELED) {
      throw MpiError("this MPI does not support MPI_THREAD_FUNNELED");
    }
    world_ = std::make_unique<Communicator>(MPI_COMM_WORLD);
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

MpiSession::~MpiSession() {
  world_.reset();  // the communicator is freed before MPI ends
  MPI_Finalize();
}

std::string MpiSession::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return {};
  const std::string version(text);  // up to its terminating zero, which `length` may count
  return version.substr(0, version.find_first_of("\r\n"));
}

}  // namespace nbody::distributed
