#!/usr/bin/env python
"""spinup_tf command line. ``python run.py --help`` lists the commands.

    python run.py td3 --env MountainCarContinuous-v0
    python run.py plot data/td3_Pendulum-v1 --save td3.png
    python run.py test_policy data/td3_Pendulum-v1/td3_Pendulum-v1_s0 --norender
"""
import os
import sys

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

if __name__ == '__main__':
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from spinup_tf.tools.cli import main
    sys.exit(main())
