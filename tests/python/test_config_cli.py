"""``isthmus config check`` and ``isthmus config convert`` through the C library: what a real
namcouple says, its YAML conversion read back, and errors with file, line and keyword."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("ISTHMUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = os.environ.get("ISTHMUS_BUILD_DIR", str(SOURCE / "build"))
DATA = SOURCE / "tests" / "coupler" / "data"

pytestmark = pytest.mark.skipif(not (Path(BUILD) / "libisthmus.so").is_file(),
                                reason=f"no libisthmus.so in {BUILD}")


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"), ISTHMUS_BUILD_DIR=BUILD)
    return subprocess.run([sys.executable, "-m", "isthmus", "config", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_check_prints_what_was_understood():
    r = run("check", str(DATA / "namcouples" / "orca2_lmdz"))
    assert r.returncode == 0, r.stderr
    assert "5 entries ($NFIELDS 5), run time 86400 s" in r.stdout
    assert "O_SSTSST:OIceFrc -> A_SST:A_IceFrc, EXPORTED, every 3600 s" in r.stdout
    assert "weights from rmp_lmdz_to_torc_BILINEAR.nc" in r.stdout


def test_convert_writes_yaml_that_checks_the_same(tmp_path):
    out = tmp_path / "orca2_lmdz.yaml"
    r = run("convert", str(DATA / "namcouples" / "oasis2_nbmodel"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "models: [ocean, atmos]" in text
    assert "- LOCTRANS: AVERAGE" in text
    # The YAML says the same as the namcouple: only the file name and the line numbers differ.
    def understood(path):
        text = run("check", str(path)).stdout.split("\n", 1)[1]
        return re.sub(r"\(line \d+\)", "", text)
    assert understood(DATA / "namcouples" / "oasis2_nbmodel") == understood(out)


def test_convert_to_standard_output():
    r = run("convert", str(DATA / "namcouples" / "oasis5_options"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# isthmus coupling configuration")
    assert "ncdftyp: cdf2" in r.stdout


def test_errors_name_file_line_and_keyword(tmp_path):
    bad = tmp_path / "namcouple"
    bad.write_text("$NFIELDS\n 1\n$RUNTIME\n 100\n$STRINGS\nA B 1 10 1 r.nc EXPORTED\n"
                   "ga gb\nP 0 P 0\nLOCTRANS\nAVRAGE\n")
    r = run("check", str(bad))
    assert r.returncode == 1
    assert r.stdout == ""
    assert (f'isthmus config check: {bad}:10: LOCTRANS: unknown time operation "AVRAGE" '
            "(expected INSTANT, ACCUMUL, AVERAGE, T_MIN or T_MAX)") in r.stderr


def test_missing_file():
    r = run("check", "/nonexistent/namcouple")
    assert r.returncode == 1
    assert "/nonexistent/namcouple: cannot open" in r.stderr
