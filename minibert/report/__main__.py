import sys

from minibert.report.render import main

sys.exit(main())
