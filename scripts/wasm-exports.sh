#!/usr/bin/env bash
# The -sEXPORTED_FUNCTIONS list: every av_ function the public header declares (declarations start
# in column 0 with a type), plus the allocator.
grep -E '^[a-z].*\bav_[a-z0-9_]+[(]' "$(dirname "$0")/../include/attnviz.h" |
  grep -oE '\bav_[a-z0-9_]+[(]' | sed 's/[(]//' | sort -u | sed 's/^/_/' | tr '\n' ',' | sed 's/$/_malloc,_free/'
