// Driver for test_comm_abort: the last rank fails while the others wait in a barrier that
// can never complete; abort_world must end the whole job (the test has a short timeout).
#include "comm/world.hpp"

int main(int argc, char** argv) {
  emb::World w = emb::init_world(&argc, &argv);
  if (w.rank == w.size - 1) emb::abort_world(3);
  MPI_Barrier(w.comm);
  emb::finalize_world();
  return 0;
}
