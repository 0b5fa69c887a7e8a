"""Which lines of ``spinup_tf/`` a run executes: a ``sys.settrace`` line tracer around one
``run.py`` command, in this process.

    python bench/line_trace.py [--by-file] -- td3 --env Pendulum-v1 --epochs 2 \
        --steps_per_epoch 300 --fused False

It prints the distinct executed lines and files of ``spinup_tf/``, in all and outside
``utils/``, ``tools/`` and ``saving/`` (the infrastructure a reader of an algorithm does not
have to follow). A package ``__init__.py`` counts its lines but is not counted as a file.
The figures are what a reader would have to follow to see everything the run did.
"""
import argparse
import os
import os.path as osp
import sys
import tempfile
import threading

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
PACKAGE = osp.join(ROOT, 'spinup_tf') + os.sep
INFRASTRUCTURE = ('utils', 'tools', 'saving')


def trace_run(argv):
    """``{path: set(line numbers)}`` executed in ``spinup_tf/`` by ``run.py argv``."""
    seen = {}

    def local(frame, event, arg):
        if event == 'line':
            seen.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename.startswith(PACKAGE):
            seen.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
            return local
        return None

    sys.path.insert(0, ROOT)
    from spinup_tf.tools.cli import main as cli_main
    threading.settrace(global_)
    sys.settrace(global_)
    try:
        cli_main(list(argv))
    except SystemExit:
        pass
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return seen


def summary(seen):
    def rel(path):
        return osp.relpath(path, PACKAGE)

    def counted_file(path):
        return osp.basename(path) != '__init__.py'

    rows = sorted((rel(p), len(lines)) for p, lines in seen.items())
    core = [(p, n) for p, n in rows if p.split(os.sep)[0] not in INFRASTRUCTURE]
    return rows, core, counted_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--by-file', action='store_true', help='list every file and its lines')
    ap.add_argument('argv', nargs=argparse.REMAINDER, help='run.py arguments after --')
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ['--'] else args.argv
    with tempfile.TemporaryDirectory() as tmp:
        argv = argv + ['--data_dir', tmp]
        seen = trace_run(argv)
    rows, core, _ = summary(seen)

    def files(rs):
        return sum(1 for p, _ in rs if osp.basename(p) != '__init__.py')

    if args.by_file:
        for p, n in rows:
            print('%5d  %s' % (n, p))
    print('spinup_tf/: %d files, %d distinct lines' % (files(rows), sum(n for _, n in rows)))
    print('outside %s: %d files, %d distinct lines' % ('/'.join(INFRASTRUCTURE), files(core),
                                                       sum(n for _, n in core)))


if __name__ == '__main__':
    main()
