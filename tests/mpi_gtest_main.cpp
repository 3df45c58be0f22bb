// main() for GoogleTest binaries run under mpirun: only rank 0 prints (every rank with
// ISTHMUS_ALL_PRINT set, to see another rank's failures), and a failure on any
// rank fails the run on every rank (so that mpirun's exit code reflects it).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0 && !getenv("ISTHMUS_ALL_PRINT")) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && global != local) fprintf(stderr, "a test failed on another rank\n");
  MPI_Finalize();
  return global;
}
