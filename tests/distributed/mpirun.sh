# Runs a program under mpirun as the distributed tests do:
#   bash mpirun.sh NP shm|tcp PROGRAM [ARGS...]
# --bind-to none (mpirun would pin each rank to one core, starving the
# device pools), --oversubscribe (3 ranks on 2 cores), --allow-run-as-root
# as root; tcp: OpenMPI's TCP transport over loopback instead of shared
# memory. TGC_MPI_PIECE_BYTES=1000: pieces of 1,000 bytes, so that small
# tensors cross piece boundaries.
set -eu
NP=$1
TRANSPORT=$2
shift 2
ARGS=(--oversubscribe --bind-to none --timeout 120 -np "$NP" -x TGC_MPI_PIECE_BYTES=1000)
[ "$(id -u)" = 0 ] && ARGS+=(--allow-run-as-root)
[ "$TRANSPORT" = tcp ] && ARGS+=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Under AddressSanitizer (make test-asan): OpenMPI's components stay loaded
# and stacks are unwound slowly, so that LeakSanitizer can name OpenMPI's
# own blocks (tests/lsan.supp) and tgc's are still reported.
export OMPI_MCA_mca_base_component_disable_dlclose=1
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
[ -n "${LSAN_OPTIONS:-}" ] && export LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
[ -n "${TSAN_OPTIONS:-}" ] && export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$(dirname "$0")/tsan_openmpi.supp"
exec mpirun "${ARGS[@]}" "$@"
