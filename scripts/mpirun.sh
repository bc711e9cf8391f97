#!/usr/bin/env bash
# mpirun with the environment Open MPI 4.1 needs in a root container without ssh: run as root,
# oversubscribe, no rsh agent, no CMA. `make mpi` builds the MPI binary, target/mpi/release/trnsim.
# Usage: scripts/mpirun.sh -np 2 target/mpi/release/trnsim run --mpi fabric-allreduce-nl72x2-nodes
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_plm_rsh_agent=false
export OMPI_MCA_btl_vader_single_copy_mechanism=none
exec mpirun "$@"
