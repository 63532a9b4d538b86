"""shared_data.py: where the oracles find the real-model data, and the one line they print without it.

The data is $ATTNVIZ_SHARED/data/stories260K, ATTNVIZ_SHARED defaulting to ../shared beside the repository
(README, "The real-model data"); no oracle names another path.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stories_dir():
    shared = os.environ.get("ATTNVIZ_SHARED") or os.path.join(ROOT, "..", "shared")
    return os.path.normpath(os.path.join(shared, "data", "stories260K"))


def skipped(what):
    """The SKIPPED line of every layer, on stderr: what was not checked, and how to check it."""
    print("SKIPPED: real-model checks (%s): %s not found; set ATTNVIZ_SHARED=/path/to/shared" % (what, stories_dir()),
          file=sys.stderr, flush=True)
