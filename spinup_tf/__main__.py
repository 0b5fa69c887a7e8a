"""``python -m spinup_tf ...`` and the ``spinup-tf`` console script: what ``python run.py ...``
does (``spinup_tf.tools.cli``)."""
import os
import sys


def main(argv=None):
    """Entry point; returns the exit code (the console script exits with it)."""
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')  # before anything imports TensorFlow
    from spinup_tf.tools.cli import main as cli_main
    return cli_main(argv)


if __name__ == '__main__':
    sys.exit(main())
