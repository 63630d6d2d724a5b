#!/usr/bin/env bash
# Fails when a C++ source of the tree is not formatted by the tree's .clang-format (`make format`
# fixes it). Usage: format_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
mapfile -t files < <(find analyzer bench cli collector comm comparator emulator fuzz opkit runtime_hooks samples tests tool_scaleout viewer \
                       -name '*.cpp' -o -name '*.h' | sort)
if ! clang-format --dry-run --Werror "${files[@]}" 2> /tmp/npuscope_format_check.$$; then
  grep -m 20 'error:' /tmp/npuscope_format_check.$$ || true
  rm -f /tmp/npuscope_format_check.$$
  echo "FAIL: these files are not formatted; run: make format"
  exit 1
fi
rm -f /tmp/npuscope_format_check.$$
echo "format_check: ${#files[@]} files formatted"
