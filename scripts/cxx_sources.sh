#!/usr/bin/env bash
# Prints the tree's C++ sources, one path a line, sorted: the files `make format` formats and the
# format_check test checks. No folder is listed by hand: a new folder is covered once git knows it.
# In a git checkout: every .cpp and .h git tracks (staged ones too), and the untracked ones inside
# the folders it tracks, so that a new file is formatted before its first `git add` (but not a
# build tree of any name, nor what .gitignore names). Elsewhere (a source tarball, or a checkout git
# will not read as another user's): every one outside build*/ and hidden folders.
#
#   cxx_sources.sh [SOURCE_DIR]     (default: the tree this script is in)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  folders=()
  mapfile -t folders < <(git ls-files | sed -n 's|/.*||p' | sort -u)
  untracked=()
  for d in "${folders[@]}"; do untracked+=("$d/*.cpp" "$d/*.h"); done
  { git ls-files -- '*.cpp' '*.h'; git ls-files --others --exclude-standard -- "${untracked[@]}"; } |
    while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done | sort -u  # not a deletion to commit
else
  find . \( -name 'build*' -o -name '.?*' \) -prune -o -type f \( -name '*.cpp' -o -name '*.h' \) -print |
    sed 's|^\./||' | sort
fi
