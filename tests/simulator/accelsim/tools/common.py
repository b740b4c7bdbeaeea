"""Helpers shared by the tool fakes."""

import argparse
import sys


class ToolParser(argparse.ArgumentParser):
    """argparse that reports errors the way the small C tools do: usage on stderr, exit 1."""

    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: %s\n" % (self.prog, message))
        raise SystemExit(1)


def err(prog, message, rc=1):
    sys.stderr.write("%s: %s\n" % (prog, message) if prog else message + "\n")
    return rc
