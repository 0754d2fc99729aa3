import sys

from minibert.report.command import PROG, parser, problem

if not {"-h", "--help"} & set(sys.argv[1:]):  # a usage error before the engine is imported; --help is the engine's
    if (said := problem(parser().parse_args())) is not None:
        print(f"{PROG}: error: {said}", file=sys.stderr)
        sys.exit(2)

from minibert.report.render import main  # noqa: E402

sys.exit(main())
