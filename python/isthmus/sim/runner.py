"""Run a benchmark under SimGrid SMPI on a generated platform and collect its JSON lines.

The SMPI build (build-smpi/, see cmake/smpi.cmake) is configured and the benchmark target built
on demand. smpirun gets the options that make large runs feasible:

- ``-no-privatize``: all simulated ranks share one address space (the library keeps no mutable
  global state, so this is safe; ``privatize=True`` restores SMPI's default for code with globals);
- ``smpi/simulate-computation:no``: only communication takes simulated time, which also makes
  runs deterministic (``simulate_computation=True`` benchmarks the computation instead);
- ``smpi/send-is-detached-thresh:0``: every send is a rendezvous; SMPI 3.32 keeps eager messages
  in a list with linear removal (1024 ranks of mixed collectives: 219 s -> 14.6 s);
- ``contexts/guard-size:0`` and a 1 GiB ``smpi/shared-malloc-blocksize``: fewer memory mappings
  per simulated rank, so that 10^4+ ranks stay under vm.max_map_count;
- ``smpi/display-timing:yes``: SimGrid reports the simulated end time, recorded with the results;
- ``smpi/allgather:rdb``: recursive doubling, as real MPIs do for small allgathers; SMPI 3.32's
  default sends between every pair of ranks, which made the coupler's one world allgather cost
  152 s of host time at 256+256 ranks (2.1 s with rdb; docs/results/coupling.md);
- ``smpi/allreduce:rdb``, ``smpi/reduce:binomial``, ``smpi/barrier:ompi_recursivedoubling``: the
  logarithmic algorithms real MPIs use for small messages. SMPI's defaults are linear: the root
  completes P - 1 requests through repeated waitany (O(P^2) simulator work: 65,536 ranks of the
  neighbour skeleton took 1,800 s of CPU, 83 s with these), and its barrier releases the ranks one
  message overhead apart, a stagger of up to P x 0.5 us that the timed exchanges then measured
  (7.7 ms instead of 0.25 ms at 16,384 ranks; docs/simulation.md). The error contract's
  agreements are allreduces.

SimGrid is Debian's 3.32 (smpicc, smpicxx, smpirun in PATH) unless another installation is named
with ``simgrid=PREFIX`` or ``ISTHMUS_SIMGRID=PREFIX`` (e.g. 4.1 from sim/build_simgrid.sh): its
compilers then build the benchmarks in a build directory of its own (the default one suffixed
with ``-simgrid<version>``), and its smpirun runs them with its libsimgrid.

Memory is measured as PSS of the simulator process (``/proc/PID/smaps_rollup``): SMPI's shared
buffers are mapped once per rank and maxrss would count every mapping again.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from isthmus.sim.calibration import calibration_cfg
from isthmus.sim.platform import Platform, platform_from_spec

RUN_CFG: Dict[str, str] = {
    "smpi/simulate-computation": "no",
    "smpi/send-is-detached-thresh": "0",
    "contexts/guard-size": "0",
    "smpi/shared-malloc-blocksize": str(1 << 30),
    "smpi/display-timing": "yes",
    "smpi/allgather": "rdb",
    "smpi/allreduce": "rdb",
    "smpi/reduce": "binomial",
    "smpi/barrier": "ompi_recursivedoubling",
}

# SimGrid 3.33 merged smpi/bw-factor and smpi/lat-factor into the network/ options (the old
# names remain as aliases that print a notice at every start): the new names from 4.x on.
CFG_RENAMED_4: Dict[str, str] = {
    "smpi/bw-factor": "network/bandwidth-factor",
    "smpi/lat-factor": "network/latency-factor",
}
# Per-message overheads "0:A:0" (A seconds from 0 bytes up) charge A to every message in 3.32, but
# nothing to 0-byte messages in 4.x, whose first range starts above its bound: a linear barrier's
# release then no longer pays P x A, and simulated times change. A constant A is written as "A"
# for 4.x, which charges every message as 3.32 does (identical simulated times, sim/README.md).
OVERHEAD_KEYS = ("smpi/os", "smpi/ois", "smpi/or")


def _cfg_for(version: str, options: Dict[str, str]) -> Dict[str, str]:
    """SimGrid options written for 3.32 (platform.py, RUN_CFG, --cfg) as `version` needs them."""
    if not version or int(version.split(".")[0]) < 4:
        return dict(options)
    out = {}
    for key, value in options.items():
        if key in OVERHEAD_KEYS:
            m = re.fullmatch(r"0:([0-9.eE+-]+):([0-9.eE+-]+)", value)
            if m and float(m.group(2)) == 0:
                value = m.group(1)
        out[CFG_RENAMED_4.get(key, key)] = value
    return out


def source_dir() -> Path:
    env = os.environ.get("ISTHMUS_SOURCE_DIR")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parents[3]


def simgrid_prefix(prefix=None) -> Optional[Path]:
    """The SimGrid installation to use: `prefix`, else $ISTHMUS_SIMGRID, else None (the one in
    PATH, Debian's 3.32). An empty string also selects the one in PATH."""
    text = str(prefix) if prefix is not None else os.environ.get("ISTHMUS_SIMGRID", "")
    if not text:
        return None
    p = Path(text).expanduser().resolve()
    if not (p / "bin" / "smpirun").exists():
        raise FileNotFoundError(f"SimGrid prefix '{text}': no bin/smpirun there "
                                f"(sim/build_simgrid.sh {p} builds SimGrid 4.1 into it)")
    return p


def _smpirun(prefix: Optional[Path]) -> str:
    return str(prefix / "bin" / "smpirun") if prefix else "smpirun"


_VERSIONS: Dict[str, str] = {}


def simgrid_version(prefix: Optional[Path] = None) -> str:
    """`smpirun --version` of the installation, e.g. 'SimGrid version 3.32'."""
    exe = _smpirun(prefix)
    if exe not in _VERSIONS:
        try:
            out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True).stdout
            _VERSIONS[exe] = out.strip().splitlines()[0]
        except (OSError, IndexError):
            _VERSIONS[exe] = "unknown"
    return _VERSIONS[exe]


def simgrid_release(prefix: Optional[Path] = None) -> str:
    """The version number alone ('3.32', '4.1'), '' if unknown."""
    m = re.search(r"version (\d+(?:\.\d+)*)", simgrid_version(prefix))
    return m.group(1) if m else ""


def default_build_dir(simgrid=None) -> Path:
    """build-smpi/ of the source tree (or $ISTHMUS_SMPI_BUILD_DIR); with another SimGrid than the
    one in PATH, that name suffixed with -simgrid<version>, so that builds never mix."""
    env = os.environ.get("ISTHMUS_SMPI_BUILD_DIR")
    base = Path(env).resolve() if env else source_dir() / "build-smpi"
    prefix = simgrid_prefix(simgrid)
    if prefix is None:
        return base
    release = simgrid_release(prefix) or prefix.name
    return base.with_name(f"{base.name}-simgrid{release}")


def _configured_prefix(build_dir: Path) -> Optional[str]:
    """ISTHMUS_SIMGRID_PREFIX of an existing build ('' when built with the SimGrid in PATH),
    None when build_dir is not configured."""
    try:
        cache = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"^ISTHMUS_SIMGRID_PREFIX:[A-Z]+=(.*)$", cache, re.M)
    return m.group(1).strip() if m else ""


def ensure_built(targets: Sequence[str], build_dir: Optional[Path] = None, log=None,
                 simgrid=None) -> Path:
    """Configures build_dir with cmake/smpi.cmake if it is not yet, then builds targets. With
    `simgrid` (or $ISTHMUS_SIMGRID) the compilers are that installation's."""
    prefix = simgrid_prefix(simgrid)
    build_dir = Path(build_dir or default_build_dir(prefix or ""))
    src = source_dir()
    configured = _configured_prefix(build_dir)
    if configured is not None and configured != (str(prefix) if prefix else ""):
        raise RuntimeError(f"{build_dir} was configured with the SimGrid "
                           f"{'in ' + configured if configured else 'in PATH'}, not "
                           f"{prefix or 'the one in PATH'}; use another build directory")
    if not (build_dir / "build.ninja").exists() and not (build_dir / "Makefile").exists():
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        hint = [f"-DISTHMUS_SIMGRID_PREFIX={prefix}"] if prefix else []
        _check([ "cmake", "-S", str(src), "-B", str(build_dir), *gen,
                "-DCMAKE_BUILD_TYPE=RelWithDebInfo", *hint,
                f"-DCMAKE_TOOLCHAIN_FILE={src / 'cmake' / 'smpi.cmake'}"], log)
    if targets:
        _check(["cmake", "--build", str(build_dir), "-j", "2", "--target", *targets], log)
    return build_dir


def _check(cmd, log):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log is not None:
        log.write(r.stdout)
    if r.returncode != 0:
        raise RuntimeError(f"command failed ({r.returncode}): {shlex.join(cmd)}\n"
                           f"{r.stdout[-4000:]}")


def bench_executable(bench: str, build_dir: Optional[Path] = None, build: bool = True,
                     simgrid=None) -> Path:
    """A path to an executable (the user's own SMPI-compiled program) or the name of one of the
    project's benchmarks (bench/<name>/), built in the SMPI build when build is true."""
    p = Path(bench)
    if p.is_file() and os.access(p, os.X_OK):
        return p.resolve()
    if "/" in bench:
        raise FileNotFoundError(f"benchmark '{bench}': no such executable")
    if not (source_dir() / "bench" / bench).is_dir():
        known = sorted(d.name for d in (source_dir() / "bench").iterdir()
                       if (d / "CMakeLists.txt").exists())
        raise FileNotFoundError(f"benchmark '{bench}': not an executable nor one of the "
                                f"project's benchmarks ({', '.join(known)})")
    prefix = simgrid_prefix(simgrid)
    build_dir = Path(build_dir or default_build_dir(prefix or ""))
    if build:
        ensure_built([f"bench_{bench}"], build_dir, simgrid=prefix or "")
    exe = build_dir / "bench" / bench / f"bench_{bench}"
    if not exe.exists():
        raise FileNotFoundError(f"benchmark '{bench}': {exe} was not built")
    return exe


# ---- memory of the simulator process --------------------------------------------------------
def _children(pid: int) -> List[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def process_tree_pss(pid: int) -> int:
    """PSS in bytes of pid and all its descendants (smpirun is a shell around smpimain)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            pass
        todo += _children(p)
    return total


@dataclass
class RunResult:
    records: List[dict]
    returncode: int
    wall_s: float
    peak_pss_bytes: int
    simulated_s: Optional[float]
    workdir: Path
    command: List[str]
    log_tail: str = ""
    meta: Dict[str, object] = field(default_factory=dict)


def simgrid_options(platform_cfg: Dict[str, str], calibration: Optional[str] = None,
                    cfg: Sequence[str] = (), simulate_computation: bool = False) -> Dict[str, str]:
    """The SimGrid options of a run, later ones overriding earlier ones: the platform's model
    settings, the runner's (RUN_CFG), the calibration's (sim/calibration.py), then `cfg`
    ("key:value" items, --cfg on the command line)."""
    options = dict(platform_cfg)
    options.update(RUN_CFG)
    if calibration:
        options.update(calibration_cfg(calibration))
    if simulate_computation:
        options["smpi/simulate-computation"] = "yes"
    for item in cfg:
        key, sep, value = item.partition(":")
        if not sep:
            raise ValueError(f"--cfg '{item}': expected key:value (a SimGrid option)")
        options[key] = value
    return options


def run(bench: str, platform, ranks: int, bench_args: Sequence[str] = (), *,
        ranks_per_node: Optional[int] = None, build_dir: Optional[Path] = None,
        build: bool = True, cfg: Sequence[str] = (), privatize: bool = False,
        simulate_computation: bool = False, full_platform: bool = False,
        results: Optional[Path] = None, workdir: Optional[Path] = None,
        env: Optional[Dict[str, str]] = None, progress: Optional[bool] = None,
        timeout: Optional[float] = None, simgrid=None,
        calibration: Optional[str] = None) -> RunResult:
    """Runs bench on `ranks` simulated ranks of `platform` (a Platform or a spec string), returns
    its JSON records and appends them, with the platform and options, to `results` if given.
    `simgrid` (or $ISTHMUS_SIMGRID) is the prefix of another SimGrid than the one in PATH.
    `calibration` names a per-message cost calibration (sim/calibration.py): its options replace
    the platform's and the runner's, and `cfg` still overrides them."""
    plat: Platform = platform if isinstance(platform, Platform) else platform_from_spec(platform)
    if calibration:
        calibration_cfg(calibration)  # an unknown name fails before anything is built
    per = ranks_per_node or plat.cores
    used = plat if full_platform else plat.trimmed(-(-ranks // per))
    hosts = used.hostfile(ranks, per)  # validates ranks against the platform size
    prefix = simgrid_prefix(simgrid)
    exe = bench_executable(bench, build_dir, build, simgrid=prefix or "")
    release = simgrid_release(prefix)

    own_dir = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="isthmus-sim-")) if own_dir else Path(workdir).resolve()
    wd.mkdir(parents=True, exist_ok=True)
    (wd / "platform.xml").write_text(used.xml())
    (wd / "hostfile").write_text(hosts)

    options = simgrid_options(used.cfg, calibration, cfg, simulate_computation)
    cfg_args = [f"--cfg={k}:{v}" for k, v in _cfg_for(release, options).items()]
    cmd = [_smpirun(prefix), "-np", str(ranks), "-platform", str(wd / "platform.xml"),
           "-hostfile", str(wd / "hostfile")]
    if not privatize:
        cmd.append("-no-privatize")
    cmd += [str(exe), *cfg_args, *bench_args]

    _warn_map_count(ranks)
    run_env = dict(os.environ)
    if prefix is not None:  # that installation's libsimgrid, not Debian's
        lib = str(prefix / "lib")
        run_env["LD_LIBRARY_PATH"] = ":".join(
            p for p in (lib, run_env.get("LD_LIBRARY_PATH", "")) if p)
    run_env.update(env or {})
    log_path = wd / "smpirun.log"
    t0 = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = 0
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, cwd=wd,
                                env=run_env)
        lines: List[str] = []

        def read():  # also kept in the work directory, to follow long runs
            with open(wd / "stdout.txt", "w") as copy:
                for line in proc.stdout:
                    lines.append(line)
                    copy.write(line)
                    copy.flush()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        bar = _progress_bar(progress, f"{Path(exe).name} x{ranks} on {plat.name}")
        last_sample = 0.0
        try:
            while proc.poll() is None:
                # smaps_rollup walks every page table of the simulator: at 10^4 ranks that costs
                # real CPU, so memory is sampled every 2 s after the first 10 s.
                now = time.monotonic() - t0
                if now < 10 or now - last_sample >= 2:
                    peak = max(peak, process_tree_pss(proc.pid))
                    last_sample = now
                if bar is not None:
                    bar.set_postfix_str(f"PSS {peak / 2**30:.2f} GiB, {len(lines)} lines",
                                        refresh=False)
                    bar.update(0.25)
                if timeout is not None and time.monotonic() - t0 > timeout:
                    _kill_tree(proc.pid)
                    proc.wait()
                    raise TimeoutError(f"simulation exceeded {timeout:g} s; log in {log_path}")
                time.sleep(0.25)
        finally:
            if bar is not None:
                bar.close()
        reader.join()
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time of the simulator: the wall time on a shared machine also counts other jobs.
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    log_text = log_path.read_text(errors="replace")
    m = re.search(r"Simulated time: ([0-9.eE+-]+) seconds", log_text)
    simulated = float(m.group(1)) if m else None
    returncode = proc.returncode
    if returncode == 0 and "Do all your MPI ranks call MPI_Finalize()?" in log_text:
        # SMPI 3.32 exits with 0 after MPI_Abort or a rank that returned without finalizing.
        returncode = 1

    meta = {
        "platform": plat.name,
        "platform_description": plat.describe(),
        "topology": used.topology,
        "topo_parameters": used.topo_parameters(),
        "nodes_instantiated": used.nodes(),
        "ranks": ranks,
        "ranks_per_node": per,
        "bench_args": list(bench_args),
        "cfg": cfg_args,
        "calibration": calibration or "none",
        "privatize": privatize,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "peak_pss_bytes": peak,
        "simulated_end_s": simulated,
        "simgrid": simgrid_version(prefix),
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    if prefix is not None:
        meta["simgrid_prefix"] = str(prefix)
    records = []
    for line in lines:
        line = line.strip()
        if line.startswith("{"):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            rec["sim"] = meta
            records.append(rec)
    if results is not None and returncode == 0:
        with open(results, "a") as f:
            for rec in records:
                f.write(json.dumps(rec, sort_keys=True) + "\n")
    tail = "\n".join(log_text.splitlines()[-20:])
    if own_dir and returncode == 0:
        shutil.rmtree(wd, ignore_errors=True)
    return RunResult(records, returncode, wall, peak, simulated, wd, cmd, tail, meta)


def _warn_map_count(ranks: int):
    """Every SMPI_SHARED_MALLOC block is mapped once per simulated rank (the skeleton and the
    redistribution benchmark map 2 per rank): past vm.max_map_count mmap fails mid-run."""
    try:
        limit = int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return
    if 2 * ranks + 1000 > limit:
        import sys
        print(f"isthmus simulate: warning: vm.max_map_count is {limit}; {ranks} ranks with 2 "
              f"shared buffers each need about {2 * ranks + 1000} mappings. As root: "
              f"sysctl -w vm.max_map_count={max(262144, 4 * ranks)}", file=sys.stderr)


def _kill_tree(pid: int):
    for child in _children(pid):
        _kill_tree(child)
    try:
        os.kill(pid, 9)
    except OSError:
        pass


def _progress_bar(enabled: Optional[bool], desc: str):
    try:
        from tqdm import tqdm
    except ImportError:  # the progress bar is a convenience, never a requirement
        return None
    if enabled is False:
        return None
    # No total is known in advance: the bar counts wall seconds and shows the memory used.
    return tqdm(desc=desc, unit="s", bar_format="{desc}: {elapsed}{postfix}",
                disable=None if enabled is None else False)
