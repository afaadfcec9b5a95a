#include "comm/core_sharing.hpp"

#include <sched.h>

#include "core/error.hpp"

namespace emb {

int node_cores(MPI_Comm node) {
  cpu_set_t mine, all;
  CPU_ZERO(&mine);
  const int readable = sched_getaffinity(0, sizeof(mine), &mine) == 0 ? 1 : 0;
  int every_rank_readable = 0;
  MPI_Allreduce(&readable, &every_rank_readable, 1, MPI_INT, MPI_MIN, node);
  MPI_Allreduce(&mine, &all, int(sizeof(cpu_set_t)), MPI_BYTE, MPI_BOR, node);
  return every_rank_readable ? CPU_COUNT(&all) : 0;
}

std::optional<bool> mpi_yields_when_idle() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<bool> yields;
  int index = -1;
  if (MPI_T_cvar_get_index("mpi_yield_when_idle", &index) == MPI_SUCCESS) {
    char name[256], description[1024];
    int verbosity = 0, bind = 0, scope = 0;
    int name_length = int(sizeof(name)), description_length = int(sizeof(description));
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum values = MPI_T_ENUM_NULL;
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &type, &values, description, &description_length,
                            &bind, &scope) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      if (type == MPI_C_BOOL) {
        bool value = false;
        if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) yields = value;
      } else if (type == MPI_INT) {
        int value = 0;
        if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) yields = value != 0;
      }
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return yields;
}

std::string core_sharing_warning(const std::string& host, int ranks, int cores, std::optional<bool> yields) {
  if (cores <= 0 || ranks <= cores || !yields.has_value() || *yields) return "";
  return str(ranks, " ranks on ", host, " are bound to ", cores, " core", cores == 1 ? "" : "s",
             " while mpirun counted slots for all of them, so MPI busy-polls in every blocking collective through the "
             "partner's turn (mpi_yield_when_idle off; steps up to 1.6x slower): give mpirun the node's cores as slots (--host ",
             host, ":", cores, ") or set OMPI_MCA_mpi_yield_when_idle=1");
}

}  // namespace emb
