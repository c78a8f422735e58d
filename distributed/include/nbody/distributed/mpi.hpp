#pragma once
// MPI for runs decomposed over ranks, behind a few owning types: the session
// (MPI_Init_thread / MPI_Finalize), a communicator of its own (a duplicate of the world, freed on
// destruction) and derived datatypes. Every MPI call's result goes through one check, which
// throws MpiError with MPI's own words: the communicator returns errors instead of aborting.
// Only the calling thread of the session uses MPI (MPI_THREAD_FUNNELED): oneTBB's workers never do.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/target_range.hpp"

namespace nbody::distributed {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws MpiError naming `call` and MPI's description of `result` unless it is MPI_SUCCESS.
void check_mpi(int result, std::string_view call);

// One MPI datatype, committed, freed on destruction.
class Datatype {
 public:
  // Elements of `values` consecutive values of `value` (MPI_FLOAT, MPI_DOUBLE) at the start of a
  // record `extent` bytes long, the rest of the record skipped: the positions of a Body<T>
  // (3 values of 4 or 8 bytes in a 16- or 32-byte record) or a whole Vec3<T> (extent 3 values).
  Datatype(MPI_Datatype value, int values, std::size_t extent);
  ~Datatype();
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  MPI_Datatype get() const { return type_; }
  // Bytes that travel per element (the values, not the skipped rest of the record).
  std::size_t bytes() const { return bytes_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  std::size_t bytes_ = 0;
};

// The MPI datatype of float or double.
template <class T>
MPI_Datatype value_type();
template <>
inline MPI_Datatype value_type<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype value_type<double>() {
  return MPI_DOUBLE;
}

// A communicator of its own: a duplicate of `parent`, so the suite's messages never meet another
// library's, with errors returned to check_mpi rather than aborting.
class Communicator {
 public:
  explicit Communicator(MPI_Comm parent);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Every rank's slice of `records` (slices[r] is rank r's, in records of `type`'s extent) to
  // every rank, in place: records[slices[rank()]] is this rank's contribution. The slices must
  // cover the records in rank order (balanced_slice).
  void all_gather_slices(void* records, const Datatype& type, std::span<const TargetRange> slices);
  // The elementwise largest, or sum, of every rank's `values` (the same count on every rank), in
  // place.
  void max_in_place(std::span<double> values);
  void sum_in_place(std::span<double> values);
  // max_in_place, as a non-blocking reduction (which matches only the same on the other ranks),
  // waiting at most `seconds` (infinite: as long as it takes) for the other ranks, asleep between
  // polls (no core kept busy): false where they did not all take part by then (the reduction is
  // then left unfinished: for a rank about to end the job).
  bool max_in_place_within(std::span<double> values, double seconds);
  // The ranks of this communicator that share this rank's host (its shared memory), in a
  // communicator of their own. A collective.
  std::unique_ptr<Communicator> host_ranks();
  // `text` from rank `root` to every rank.
  void broadcast(std::string& text, int root);
  // Opaque bytes (another library's handle, e.g. NCCL's unique id) from rank `root` to every
  // rank, their count included.
  void broadcast(std::vector<std::byte>& bytes, int root);
  // Every rank's `text`, in rank order, on every rank.
  std::vector<std::string> all_strings(const std::string& text);
  // Ends every process of the job with `exit_code` (MPI_Abort on the world): for a rank that
  // cannot meet the others again.
  [[noreturn]] void abort(int exit_code) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

// MPI for the life of this object: MPI_Init_thread (funneled) on construction, MPI_Finalize on
// destruction, the world's duplicate in between.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  Communicator& world() { return *world_; }
  // "Open MPI v4.1.4, ..." (MPI_Get_library_version's first line), for the build record.
  static std::string library_version();

 private:
  std::unique_ptr<Communicator> world_;
};

}  // namespace nbody::distributed
