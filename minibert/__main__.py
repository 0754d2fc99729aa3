import sys

from minibert.training.precheck import problems

if (problem := problems(sys.argv[1:])) is not None:  # answered before torch and Lightning are imported
    print(f"python -m minibert: error: {problem}", file=sys.stderr)
    sys.exit(2)

from minibert.training.cli import main  # noqa: E402

main()
