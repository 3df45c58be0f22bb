"""The isthmus toy in Python with isthmus.Coupler (examples/README.md, docs/python.md).

An ocean on the ORCA2 grid and an atmosphere on the LMDZ grid coupled both ways as
examples/toy/namcouple says; the same model as toy.c, line for line. One script for both
components, MPMD::

    mpirun -n 2 python3 toy.py ocean : -n 3 python3 toy.py atmos    (run.sh sets the run up)

in a directory holding the namcouple, grid_torc.nc, grid_lmdz.nc and the weights files. Every
hour (86400 s in steps of 3600 s) the ocean puts O_SST = 2 + cos^2(lat) cos(2 (lon - w t))
(Jones 1999, F1) and the atmosphere A_FLX = 2 + sin^16(2 lat) cos(16 (lon - w t)) (Jones 1999,
F2), w = 10 degrees an hour. The atmosphere receives O_SST every 6 h averaged over the ocean's
puts since the previous coupling (LOCTRANS AVERAGE); the ocean receives A_FLX every 3 h lagged
by one step (LAG=3600; at 0 from rst_a.nc, which the atmosphere writes before enddef). Each
reception is compared with the analytic field on the active points; the exit code is 1 if an
error exceeds its bound or a coupling date was missed.

Needs PYTHONPATH to hold the isthmus package (python/) and the library found as docs/python.md
says ($ISTHMUS_BUILD_DIR, or build/ of the source tree).
"""

import sys

import netCDF4
import numpy as np
from mpi4py import MPI

import isthmus

# the namcouple's numbers
DT, RUNTIME, SST_PERIOD, FLX_PERIOD, FLX_LAG = 3600, 86400, 21600, 10800, 3600
DRIFT = np.radians(10.0) / 3600.0  # w, radians per second
# bounds on the bilinear weights' errors (measured 0.0956/0.0075 and 0.335/0.0286)
BOUNDS = {"A_SST": (0.12, 0.010), "O_FLX": (0.40, 0.035)}


def sst(lon, lat, t):
    return 2.0 + np.cos(lat) ** 2 * np.cos(2.0 * (lon - DRIFT * t))


def flx(lon, lat, t):
    s2 = np.sin(2.0 * lat) ** 2
    s8 = (s2 * s2) ** 2
    return 2.0 + s8 * s8 * np.cos(16.0 * (lon - DRIFT * t))


def read_grid(path):
    """lon, lat (radians) and imask (1 = active) of an OASIS grid file, flattened (i + nx j)."""
    with netCDF4.Dataset(path) as nc:
        return (np.radians(np.asarray(nc["lon"][:], dtype=np.float64).ravel()),
                np.radians(np.asarray(nc["lat"][:], dtype=np.float64).ravel()),
                np.asarray(nc["imask"][:], dtype=np.intc).ravel())


def write_restart(lon, lat, ny, nx):
    """A_FLX before the run (t = -LAG), where the coupler reads it at enddef."""
    with netCDF4.Dataset("rst_a.nc", "w", format="NETCDF3_64BIT_OFFSET") as nc:
        nc.createDimension("A_FLX_ny", ny)
        nc.createDimension("A_FLX_nx", nx)
        nc.createVariable("A_FLX", "f8", ("A_FLX_ny", "A_FLX_nx"))[:] = \
            flx(lon, lat, -FLX_LAG).reshape(ny, nx)


class Timing:
    """Time in one field's puts or gets on this rank."""

    def __init__(self):
        self.calls = self.moved = 0
        self.moving = self.other = self.slowest = 0.0

    def add(self, seconds, moved):
        self.calls += 1
        if moved:
            self.moved += 1
            self.moving += seconds
            self.slowest = max(self.slowest, seconds)
        else:
            self.other += seconds

    def print(self, comm, comp, field, call, verb):
        sums = comm.reduce(np.array([self.moving, self.other]), op=MPI.SUM, root=0)
        slowest = comm.reduce(self.slowest, op=MPI.MAX, root=0)
        if comm.rank == 0:
            moving, other = sums
            others = self.calls - self.moved
            print(f"{comp}: timing {field:<5} {call}: {self.calls:2d} calls, {self.moved} {verb}: "
                  f"{1e3 * moving / comm.size / self.moved if self.moved else 0.0:.3f} ms each "
                  f"(mean over ranks), slowest {1e3 * slowest:.3f} ms; the other {others}: "
                  f"{1e3 * other / comm.size / others if others else 0.0:.4f} ms each",
                  flush=True)


class Errors:
    """The errors of one received field against the analytic one on the active points."""

    def __init__(self):
        self.receptions = 0
        self.worst_max = self.worst_rms = self.checksum = 0.0

    def compare(self, comm, comp, field, date, got, want, mask):
        active = mask != 0
        d = np.abs(got[active] - want[active])
        local = np.array([float(np.sum(d * d)), float(d.size), sum(got[active].tolist())])
        total = comm.allreduce(local, op=MPI.SUM)
        gmax = comm.allreduce(float(d.max()) if d.size else 0.0, op=MPI.MAX)
        rms = float(np.sqrt(total[0] / total[1]))
        if comm.rank == 0:
            print(f"{comp}: received {field} at {date:5d} s: max error {gmax:.3e}, rms {rms:.3e} "
                  f"over {total[1]:.0f} active points", flush=True)
        self.receptions += 1
        self.worst_max = gmax if not gmax <= self.worst_max else self.worst_max
        self.worst_rms = rms if not rms <= self.worst_rms else self.worst_rms
        self.checksum += total[2]


def main(comp):
    ocean = comp == "ocean"
    ok = False
    # every process: one coupler, naming its component; the namcouple of the run directory
    with isthmus.Coupler(MPI.COMM_WORLD, comp, "namcouple") as cpl:
        comm = cpl.local_comm
        nx, ny = (182, 149) if ocean else (96, 72)
        lon, lat, mask = read_grid("grid_torc.nc" if ocean else "grid_lmdz.nc")
        nglob = nx * ny
        # an OASIS apple partition: this rank's consecutive range of the grid (index i + nx j)
        first = nglob * comm.rank // comm.size
        n = nglob * (comm.rank + 1) // comm.size - first
        part = isthmus.Partition(cpl, [1, first, n], global_size=nglob,
                                 name="torc" if ocean else "lmdz")
        out_name, in_name = ("O_SST", "O_FLX") if ocean else ("A_FLX", "A_SST")
        out_field = isthmus.Field(out_name, part, "out")
        in_field = isthmus.Field(in_name, part, "in")
        if not ocean and comm.rank == 0:
            write_restart(lon, lat, ny, nx)  # read back by this rank in enddef
        cpl.enddef()

        lon, lat, mask = lon[first:first + n], lat[first:first + n], mask[first:first + n]
        received = in_field.zeros()
        put_t, get_t, err = Timing(), Timing(), Errors()
        for t in range(0, RUNTIME, DT):
            if ocean:
                values = sst(lon, lat, t)
                t0 = MPI.Wtime()
                info = out_field.put(t, values)
                put_t.add(MPI.Wtime() - t0, info == isthmus.Info.SENT)
                t0 = MPI.Wtime()
                info, _ = in_field.get(t, received)
                get_t.add(MPI.Wtime() - t0, info == isthmus.Info.RECVD)
                if info == isthmus.Info.RECVD:  # the atmosphere's field one step earlier
                    err.compare(comm, comp, in_name, t, received, flx(lon, lat, t - FLX_LAG),
                                mask)
            else:
                t0 = MPI.Wtime()
                info, _ = in_field.get(t, received)
                get_t.add(MPI.Wtime() - t0, info == isthmus.Info.RECVD)
                if info == isthmus.Info.RECVD:  # the average of the ocean's puts in (t - 6 h, t]
                    window = [s for s in range(t, t - SST_PERIOD, -DT) if s >= 0]
                    want = np.zeros(n)
                    for s in window:
                        want += sst(lon, lat, s)
                    err.compare(comm, comp, in_name, t, received, want / len(window), mask)
                values = flx(lon, lat, t)
                t0 = MPI.Wtime()
                info = out_field.put(t, values)
                put_t.add(MPI.Wtime() - t0, info == isthmus.Info.SENT)

        # timings, then the communication report (collective over the component)
        put_t.print(comm, comp, out_name, "put", "sent")
        get_t.print(comm, comp, in_name, "get", "received")
        report = cpl.report()
        expected = RUNTIME // (FLX_PERIOD if ocean else SST_PERIOD)
        max_bound, rms_bound = BOUNDS[in_name]
        ok = (err.receptions == expected and err.worst_max <= max_bound
              and err.worst_rms <= rms_bound)
        if comm.rank == 0:
            print(report, end="")
            print(f"{comp}: checksum {in_name} {err.checksum:.16e}")
            print(f"{comp}: {'ok' if ok else 'FAILED'} {in_name}: {err.receptions} of {expected} "
                  f"receptions, largest error {err.worst_max:.3e} (bound {max_bound:.2g}), "
                  f"largest rms {err.worst_rms:.3e} (bound {rms_bound:.2g})", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("ocean", "atmos"):
        sys.exit("usage: toy.py ocean|atmos (in a run directory: examples/toy/run.sh)")
    sys.exit(main(sys.argv[1]))
