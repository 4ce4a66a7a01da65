import sys

from drfidelity.cli import main

sys.exit(main())
