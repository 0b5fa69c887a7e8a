#!/usr/bin/env python
"""spinup_tf command line. ``python run.py --help`` lists the commands.

    python run.py td3 --env MountainCarContinuous-v0
    python run.py plot data/td3_Pendulum-v1 --save td3.png
    python run.py test_policy data/td3_Pendulum-v1/td3_Pendulum-v1_s0 --norender

A thin wrapper: the same as ``python -m spinup_tf`` or, once installed (``pip install -e .``),
``spinup-tf``.
"""
import os
import sys

if __name__ == '__main__':
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from spinup_tf.__main__ import main
    sys.exit(main())
