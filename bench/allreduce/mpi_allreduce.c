/* Peer for bench/allreduce: MPI_Allreduce (float sum, in place) over a size sweep; rank 0 prints
 * "size busbw_GBps" per size, busbw as nccl-tests computes it for allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const long min = atol(argv[1]), max = atol(argv[2]);
  const int iters = atoi(argv[3]);
  float* buf = malloc((size_t)max);
  for (long i = 0; i < max / 4; ++i) buf[i] = (float)(i % 7);
  for (long bytes = min; bytes <= max; bytes *= 4) {
    const int count = (int)(bytes / 4);
    MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* warm-up */
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double s = (MPI_Wtime() - t0) / iters;
    if (rank == 0) printf("%ld %.4f\n", bytes, (double)bytes / s / 1e9 * 2.0 * (n - 1) / n);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
