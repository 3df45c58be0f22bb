// Per-message costs of small messages under the real MPI: what a simulated platform's
// per-message parameters (SMPI's smpi/os, smpi/ois, smpi/or; LogGP's o and g) stand for.
//
//   bench_msgcost [--bytes 80] [--n 90] [--reps 15]
//
// Three measurements, one JSON object each (per-message times in seconds, median/min/max over
// `reps` repetitions):
//  isend_post    rank 0 posts n MPI_Isend of B bytes to rank 1 (receives pre-posted): the time of
//                the posting loop / n is the sender's overhead per message ("post"); the loop
//                plus MPI_Waitall / n is "post_wait".
//  recv_pending  ranks 1..P (P = size - 1 peers, or 1 peer with --one-peer) have sent n messages
//                in total to rank 0 and completed them (eager) before rank 0 starts: rank 0's time
//                to post the n receives and wait for them / n is the receiver's cost per message
//                already arrived (matching and copying out of the unexpected queue).
//  stream        rank 0 sends n messages to rank 1 (Isend all, Waitall), rank 1 has pre-posted n
//                receives and answers with one 0-byte message once all arrived: (round time -
//                a 0-byte ping-pong round) / n is the gap between consecutive messages.
#include <mpi.h>

#include <string>
#include <vector>

#include "common/bench_util.h"

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const int bytes = static_cast<int>(args.integer("bytes", 80));
  const int n = static_cast<int>(args.integer("n", 90));
  const int reps = static_cast<int>(args.integer("reps", 15));
  const bool one_peer = args.get("one-peer", "0") != "0";
  if (size < 2 || n < 1 || reps < 1 || bytes < 0) {
    if (rank == 0) std::fprintf(stderr, "bench_msgcost: needs >= 2 ranks, n >= 1, reps >= 1\n");
    MPI_Abort(comm, 2);
  }
  std::vector<char> buf(static_cast<size_t>(bytes) * n + 1, 1);
  std::vector<MPI_Request> req(n);
  // message i of the n between ranks 0 and 1: its slot of buf, tag i
  auto post_recvs_from_0 = [&] {
    for (int i = 0; i < n; ++i)
      MPI_Irecv(&buf[static_cast<size_t>(i) * bytes], bytes, MPI_BYTE, 0, i, comm, &req[i]);
  };
  auto post_sends_to_1 = [&] {
    for (int i = 0; i < n; ++i)
      MPI_Isend(&buf[static_cast<size_t>(i) * bytes], bytes, MPI_BYTE, 1, i, comm, &req[i]);
  };
  auto report = [&](const char* what, int peers, std::vector<double> v, const char* key) {
    if (rank != 0) return;
    bench::Stats s = bench::stats(std::move(v));
    bench::Json()
        .str("bench", "msgcost")
        .str("measure", what)
        .str("per", key)
        .integer("ranks", size)
        .integer("peers", peers)
        .integer("bytes", bytes)
        .integer("n", n)
        .stats("", s)
        .print();
  };

  // isend_post
  {
    std::vector<double> post, post_wait;
    for (int r = 0; r <= reps; ++r) {
      if (rank == 1) post_recvs_from_0();
      MPI_Barrier(comm);
      if (rank == 0) {
        double t0 = MPI_Wtime();
        post_sends_to_1();
        double t1 = MPI_Wtime();
        MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE);
        double t2 = MPI_Wtime();
        if (r > 0) {  // r == 0 warms up
          post.push_back((t1 - t0) / n);
          post_wait.push_back((t2 - t0) / n);
        }
      } else if (rank == 1) {
        MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE);
      }
      MPI_Barrier(comm);
    }
    report("isend_post", 1, post, "post");
    report("isend_post", 1, post_wait, "post_wait");
  }

  // recv_pending
  {
    const int peers = one_peer ? 1 : size - 1;
    std::vector<double> per;
    for (int r = 0; r <= reps; ++r) {
      // message i comes from peer 1 + i % peers with tag i
      if (rank >= 1 && rank <= peers) {
        int k = 0;
        for (int i = rank - 1; i < n; i += peers, ++k)
          MPI_Isend(&buf[static_cast<size_t>(i) * bytes], bytes, MPI_BYTE, 0, i, comm, &req[k]);
        MPI_Waitall(k, req.data(), MPI_STATUSES_IGNORE);
      }
      MPI_Barrier(comm);
      if (rank == 0) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; ++i)
          MPI_Irecv(&buf[static_cast<size_t>(i) * bytes], bytes, MPI_BYTE, 1 + i % peers, i, comm,
                    &req[i]);
        MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE);
        double t1 = MPI_Wtime();
        if (r > 0) per.push_back((t1 - t0) / n);
      }
      MPI_Barrier(comm);
    }
    report("recv_pending", peers, per, "recv");
  }

  // stream
  {
    std::vector<double> per;
    char ack = 0;
    auto pingpong0 = [&] {
      if (rank == 0) {
        MPI_Send(&ack, 0, MPI_BYTE, 1, 0, comm);
        MPI_Recv(&ack, 0, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(&ack, 0, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 0, MPI_BYTE, 0, 0, comm);
      }
    };
    std::vector<double> base;
    for (int r = 0; r <= reps; ++r) {
      MPI_Barrier(comm);
      double t0 = MPI_Wtime();
      for (int k = 0; k < 10; ++k) pingpong0();
      if (r > 0) base.push_back((MPI_Wtime() - t0) / 10);
    }
    const double round0 = bench::stats(base).median;  // 0 without samples
    for (int r = 0; r <= reps; ++r) {
      if (rank == 1) post_recvs_from_0();
      MPI_Barrier(comm);
      if (rank == 0) {
        double t0 = MPI_Wtime();
        post_sends_to_1();
        MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 0, MPI_BYTE, 1, n, comm, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        if (r > 0) per.push_back((t1 - t0 - round0) / n);
      } else if (rank == 1) {
        MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 0, MPI_BYTE, 0, n, comm);
      }
    }
    report("stream", 1, per, "gap");
  }
  MPI_Finalize();
  return 0;
}
