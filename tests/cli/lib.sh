# Sourced first by the CLI tests (. "${top_srcdir:?}/tests/cli/lib.sh"):
# unset variables are errors, the program under test is named, a scratch
# directory "$tmp" is removed on exit, and ok/bad report a check (bad makes
# the test fail at its `exit $fail`).
set -u
: "${COLLSIM:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }
