#!/usr/bin/env bash
# make bench / bench/run_all.sh: isthmus's mod_oasis against the real OASIS3-MCT (issue 14).
#   bench/peers/run.sh BUILD_DIR [OUT.jsonl]
# One unchanged Fortran toy (toy_peers.F90, OASIS3-MCT 2.0's user interface) is built twice:
#   - against Debian's OASIS3-MCT (package liboasis3-dev, installed here by name if missing:
#     modules in /usr/include/psmile.MPI1, libraries psmile.MPI1 mct mpeu scrip),
#   - against isthmus's mod_oasis, installed from BUILD_DIR into a prefix and used through
#     `pkg-config --cflags/--libs isthmus-oasis` only,
# with the same compiler and flags. Both run in this one invocation, interleaved (OASIS,
# isthmus, OASIS, isthmus, ...), at 1+1, 2+2 and 4+4 ranks (MPMD: ocean : atmos), each run in a
# fresh directory holding the namcouple and the two bilinear weights files of
# tests/data/orca2-lmdz. compare.py then compares the received fields point by point and writes
# one JSON object per rank count (stdout and OUT.jsonl).
# Environment: ISTHMUS_BENCH_WORKDIR (default /tmp/isthmus-bench-peers), PEERS_REPS (interleaved
# repetitions per rank count and library, default 7), PEERS_NRT (round trips per run, default
# 500), PEERS_RANKS (ranks per component, default "1 2 4"), PEERS_TIMEOUT_VARIANT (1, the
# default: a third interleaved variant, "isthmus-timeout", the same isthmus executable with
# ISTHMUS_COUPLER_TIMEOUT=300, whose waits poll with sleeps; 0: without it),
# PEERS_BINDINGS (default "none core": each placement in turn, every library alike; none: the
# kernel places the processes; core: each bound to a core, round robin over the cores as Open
# MPI's --bind-to core --map-by core and batch systems do: where the ranks outnumber the cores,
# the kernel's placement of the two components over the cores decides a run's round trip,
# docs/results/oasis.md), ISTHMUS_BENCH_QUICK=1 (1+1 only, 2 repetitions of 50 round trips).
set -euo pipefail
build=$(cd "$1" && pwd)
out=${2:-/dev/null}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mpirun_sh="$root/tests/mpirun.sh"
data="$root/tests/data/orca2-lmdz"
work=${ISTHMUS_BENCH_WORKDIR:-/tmp/isthmus-bench-peers}
reps=${PEERS_REPS:-7} nrt=${PEERS_NRT:-500} ranks=${PEERS_RANKS:-"1 2 4"}
bindings=${PEERS_BINDINGS:-"none core"}
if [ "${ISTHMUS_BENCH_QUICK:-0}" = 1 ]; then reps=2 nrt=50 ranks=1 bindings=none; fi
dt=3600
fflags="-O2"
export ISTHMUS_GIT_COMMIT=${ISTHMUS_GIT_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
rm -rf "$work" && mkdir -p "$work"
log() { echo "peers: $*" >&2; }

# 1. Debian's OASIS3-MCT (a failure here is recorded; the isthmus half still runs)
oasis_ok=1
if ! dpkg -s liboasis3-dev > /dev/null 2>&1; then
  log "installing liboasis3-dev"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y liboasis3-dev; } \
    > "$work/apt.log" 2>&1 || { log "liboasis3-dev could not be installed (see $work/apt.log)"; oasis_ok=0; }
fi
oasis_version=$(dpkg-query -W -f='${Version}' liboasis3-dev 2>/dev/null || echo none)
if [ "$oasis_ok" = 1 ]; then
  # Debian's psmile.pc names -I/usr/include/psmile (empty: the modules are in psmile.MPI1) and
  # omits mpeu and scrip: the flags are spelled out.
  mpif90 $fflags -o "$work/toy_oasis" "$here/toy_peers.F90" \
    -I/usr/include/psmile.MPI1 -I/usr/include/mct -lpsmile.MPI1 -lmct -lmpeu -lscrip \
    $(pkg-config --libs netcdf-fortran 2>/dev/null || echo -lnetcdff -lnetcdf) \
    > "$work/build_oasis.log" 2>&1 || { log "the toy does not build against OASIS3-MCT:"; cat "$work/build_oasis.log" >&2; oasis_ok=0; }
fi

# 2. isthmus's mod_oasis, installed, through pkg-config only
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046 # the flags are words
mpif90 $fflags -o "$work/toy_isthmus" "$here/toy_peers.F90" \
  $(pkg-config --cflags isthmus-oasis) $(pkg-config --libs isthmus-oasis) \
  > "$work/build_isthmus.log" 2>&1 || { log "the toy does not build against isthmus's mod_oasis:"; cat "$work/build_isthmus.log" >&2; exit 1; }

# 3. the runs, interleaved
namcouple() {  # OASIS3-MCT 2.0 reads its keywords as ' $NAME' (one leading blank) and needs $NBMODEL
  cat <<NAM
 \$NFIELDS
   2
 \$END
 \$NBMODEL
   2  ocean atmos
 \$END
 \$RUNTIME
   $((nrt * dt))
 \$END
 \$NLOGPRT
   0
 \$END
 \$STRINGS
 O_SST A_SST 1 $dt 1 rst_sst.nc EXPORTED
 182 149 96 72 torc lmdz LAG=0
 P 2 P 0
 MAPPING
 rmp_torc_to_lmdz_BILINEAR.nc dst bfb
 A_RET O_RET 2 $dt 1 rst_ret.nc EXPORTED
 96 72 182 149 lmdz torc LAG=0
 P 0 P 2
 MAPPING
 rmp_lmdz_to_torc_BILINEAR.nc dst bfb
 \$END
NAM
}
libs="isthmus"
[ "$oasis_ok" = 1 ] && libs="oasis isthmus"
[ "${PEERS_TIMEOUT_VARIANT:-1}" = 1 ] && libs="$libs isthmus-timeout"
# isthmus runs without ISTHMUS_COUPLER_TIMEOUT (with it, its waits poll with sleeps of 10 us
# to 1 ms: the isthmus-timeout variant); a hang is bounded by the timeout command below
for binding in $bindings; do
 bind=(); [ "$binding" = core ] && bind=(--bind-to core:overload-allowed --map-by core)
 for n in $ranks; do
  for r in $(seq 1 "$reps"); do
    for lib in $libs; do
      dir="$work/runs-$binding/$lib-$n-$r"
      mkdir -p "$dir"
      ln -s "$data"/rmp_torc_to_lmdz_BILINEAR.nc "$data"/rmp_lmdz_to_torc_BILINEAR.nc "$dir"/
      namcouple > "$dir/namcouple"
      exe="$work/toy_${lib%-timeout}"
      to=""; [ "$lib" = isthmus-timeout ] && to=300
      if (cd "$dir" && ISTHMUS_COUPLER_TIMEOUT=$to timeout 600 "$mpirun_sh" "$n" ${bind[@]+"${bind[@]}"} "$exe" ocean "$nrt" "$dt" : -n "$n" "$exe" atmos "$nrt" "$dt") \
           > "$dir/stdout.txt" 2>&1 && grep -q "peers toy ocean: ok" "$dir/stdout.txt" \
           && grep -q "peers toy atmos: ok" "$dir/stdout.txt"; then
        log "$binding $lib $n+$n rep $r: $(head -1 "$dir/timings.txt")"
      else
        log "$binding $lib $n+$n rep $r FAILED:"; tail -20 "$dir/stdout.txt" >&2
        touch "$dir/FAILED"
      fi
    done
  done
 done
done

: > "$out"
for binding in $bindings; do
  python3 "$here/compare.py" "$work/runs-$binding" --ranks "$ranks" --reps "$reps" --nrt "$nrt" \
    --oasis-version "$oasis_version" --libs "$libs" --binding "$binding" | tee -a "$out"
done
