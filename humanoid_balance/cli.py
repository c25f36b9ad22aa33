"""``humanoid-balance``: the suite's command-line tool."""
import argparse
import sys

from humanoid_balance import __version__


def build_parser():
    parser = argparse.ArgumentParser(prog="humanoid-balance", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
