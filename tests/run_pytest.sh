#!/usr/bin/env bash
# pytest exits 5 when it collects no test; that is not a failure of the suite.
py=$1; dir=$2
[ -d "$dir" ] || { echo "pytest: no python test folder $dir"; exit 0; }
# Under make test-asan the library is sanitized: the Python interpreter that loads it through
# ctypes must have the sanitizer runtimes preloaded (Python's own allocations are not checked).
if [ -n "${ISTHMUS_PYTHON_PRELOAD:-}" ]; then
  export LD_PRELOAD="$ISTHMUS_PYTHON_PRELOAD" ASAN_OPTIONS=detect_leaks=0
fi
"$py" -m pytest -q "$dir"
rc=$?
[ $rc -eq 5 ] && { echo "pytest: no python tests collected"; exit 0; }
exit $rc
