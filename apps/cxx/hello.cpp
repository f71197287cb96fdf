// hello.cpp — a C++ MPI program for smpicxx + smpirun.
//
// Demonstrates:
//  - iostream output from every rank (each line is written whole: ranks run
//    one at a time, so lines never interleave);
//  - global constructors run once per rank, on the rank's own copy of the
//    globals (the counter is 1 in every rank, and each rank's object keeps
//    the value it stored);
//  - exceptions thrown and caught across functions, and through a standard
//    container (std::vector::at);
//  - std::string / std::vector / std::map as message buffers.
//
// Prints `cxx rank=<r> ctor_runs=<n> caught=<what> sum=<s>` per rank, then
// rank 0 prints `OK` (or `FAIL`, exit 1).
#include <mpi.h>

#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
int ctor_runs = 0;

struct Registry {
  std::map<int, std::string> names;
  int owner = -1;
  Registry() { ++ctor_runs; }
};
Registry registry; // constructed when each rank's copy is loaded

int checked_div(int a, int b) {
  if (b == 0)
    throw std::domain_error("division by zero");
  return a / b;
}
} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  registry.owner = rank;
  registry.names[rank] = "rank" + std::to_string(rank);

  std::string caught;
  try {
    checked_div(rank, 0);
  } catch (const std::domain_error &e) {
    caught = e.what();
  }
  int out_of_range = 0;
  try {
    std::vector<int> v(3);
    v.at(static_cast<std::size_t>(3 + rank)) = 1;
  } catch (const std::out_of_range &) {
    out_of_range = 1;
  }

  // A ring exchange of a std::string's bytes, then a reduction.
  std::string mine = registry.names[rank];
  std::vector<char> got(64, '\0');
  MPI_Sendrecv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, (rank + 1) % size, 0, got.data(),
               static_cast<int>(got.size()), MPI_CHAR, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  std::string expect = "rank" + std::to_string((rank + size - 1) % size);
  int ok = ctor_runs == 1 && registry.owner == rank && caught == "division by zero" && out_of_range == 1 &&
           std::string(got.data()) == expect;
  int all_ok = 0, sum = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  std::cout << "cxx rank=" << rank << " ctor_runs=" << ctor_runs << " caught=\"" << caught << "\" left=" << got.data()
            << " sum=" << sum << std::endl;
  MPI_Finalize();
  if (rank == 0)
    std::cout << (all_ok ? "OK" : "FAIL") << std::endl;
  return all_ok ? 0 : 1;
}
