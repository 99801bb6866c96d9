#!/bin/sh
# ctest python_tests: pytest on the built module. Skips (exit 77) with a Python that has no pytest or
# numpy. nanobind prints "nanobind: leaked ..." at exit when instances of our types, or our
# functions, outlive the interpreter (a reference cycle through C++, a Python norm never
# released): that fails the test even when every test passed.
# usage: run_pytest.sh PYTHON PYTEST_ARGS...
python=$1
shift
"$python" -c 'import pytest, numpy' 2>/dev/null || {
  echo "skipped: $python has no pytest/numpy (scripts/python_venv makes a venv that has)"
  exit 77
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$python" -m pytest "$@" >"$log" 2>&1
status=$?
cat "$log"
if grep -q "nanobind: leaked" "$log"; then
  echo "FAILED: nanobind reported leaked objects at exit (above)"
  exit 1
fi
exit $status
