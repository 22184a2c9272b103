"""The file ``python -m paddle.distributed.launch`` runs in each rank to record a run: Paddle's
launcher takes a script path, not ``-m``, so ``python -m paddleviz_widget --script-path`` prints
this file's path for the command line (README "Multi-rank runs")::

    python -m paddle.distributed.launch --nproc_per_node 4 \\
        $(python -m paddleviz_widget --script-path) train.py --run-dir runs/exp1

It is ``python -m paddleviz_widget`` with Python's run-a-file set-up undone: the directory
Python put first on sys.path for it (this package's cli/, whose module names such as watch or
capture would shadow the training script's own imports) is taken off again.
"""

import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and sys.path[0] and os.path.abspath(sys.path[0]) == here:
        del sys.path[0]
    from paddleviz_widget.cli.main import main
    from paddleviz_widget.cli.uncaught import leave

    leave(main())
