"""``python tests/sentinel_run.py ARGS`` is ``python run.py ARGS``, with a hold point the kill and
signal tests in test_resume_cli.py can act on: no clock decides where the run is when they act.

With ``SPINUP_TEST_HOLD=ROWS,STEPS`` and ``SPINUP_TEST_HOLD_PROGRESS=PATH`` set, the run holds
inside the STEPS-th environment step (counted over all envs of the process) taken after PATH (a
progress.txt) first has ROWS epoch rows: it prints the line ``SENTINEL`` on stdout, then blocks
reading a line from stdin; closing its stdin (or writing a line) releases it, and the step goes
on as usual. The hook sits in ``step`` of the classic-control env classes the tests use
(Pendulum, CartPole), so it holds however the run builds or wraps its envs. Without the
variables, this is ``run.py`` exactly.
"""
import os
import runpy
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTINEL = '[sentinel_run] holding: close stdin to release'


def _rows_in(path):
    try:
        with open(path) as f:
            return max(f.read().count('\n') - 1, 0)  # complete lines, less the header
    except FileNotFoundError:
        return 0


def install_hold(rows, steps, progress):
    """Patch the env classes' ``step`` as the module docstring says."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv
    from gymnasium.envs.classic_control.pendulum import PendulumEnv
    state = {'armed': False, 'count': 0, 'done': False}

    def hold():
        sys.stdout.flush()
        os.write(1, ('\n%s\n' % SENTINEL).encode())
        sys.stdin.readline()  # blocks until the test writes a line or closes the pipe

    def patch(cls):
        step = cls.step

        def held_step(self, action):
            if not state['done']:
                state['armed'] = state['armed'] or _rows_in(progress) >= rows
                if state['armed']:
                    state['count'] += 1
                    if state['count'] == steps:
                        state['done'] = True
                        hold()
            return step(self, action)
        cls.step = held_step

    patch(PendulumEnv)
    patch(CartPoleEnv)


if __name__ == '__main__':
    spec = os.environ.get('SPINUP_TEST_HOLD')
    if spec:
        rows, steps = (int(x) for x in spec.split(','))
        install_hold(rows, steps, os.environ['SPINUP_TEST_HOLD_PROGRESS'])
    sys.argv = [os.path.join(ROOT, 'run.py')] + sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name='__main__')
