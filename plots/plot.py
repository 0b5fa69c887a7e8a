"""Plot learning curves of spinup_tf runs; see ``spinup_tf/plot.py`` for the options.

    python plots/plot.py data/td3_Pendulum-v1 --save plots/td3.png
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from spinup_tf.tools.plot import main  # noqa: E402

if __name__ == '__main__':
    sys.exit(main())
