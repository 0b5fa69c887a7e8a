"""spinup_tf: Spinning Up's deep-RL algorithms as TensorFlow-1.x-style static graphs.

    from spinup_tf import td3
    td3(lambda: gymnasium.make('Pendulum-v1'), epochs=2,
        logger_kwargs=dict(output_dir='data/td3_pendulum'))

``td3``, ``ddpg``, ``sac``, ``dqn``, ``vpg``, ``ppo``, ``trpo`` and ``npg`` are attributes
made on first use (a module ``__getattr__``): each is an ``Algorithm`` that imports its
module, and with it TensorFlow, only when it is called. Importing ``spinup_tf`` imports
nothing else, so the command line's ``--help`` stays fast.
"""

# The registry's names (spinup_tf.algos.ALGOS; a test keeps the two lists equal).
ALGORITHMS = ('ddpg', 'td3', 'trpo', 'npg', 'vpg', 'ppo', 'sac', 'dqn')


# One of the algorithms, imported when called: ``Algorithm('td3')(env_fn, ...)`` is
# ``spinup_tf.algos.td3.td3(env_fn, ...)``. Its docstring (``__doc__``, a property) is the
# algorithm's, read from the source (``help(spinup_tf.td3)`` does not import TensorFlow), and
# it pickles by name, so a grid (``ExperimentGrid.run(td3, workers=2)``) can send it to
# worker processes.
class Algorithm:

    def __init__(self, name):
        if name not in ALGORITHMS:
            raise ValueError('unknown algorithm %r; choose from %s'
                             % (name, ', '.join(ALGORITHMS)))
        self.__name__ = self.__qualname__ = self.name = name

    def __call__(self, *args, **kwargs):
        from spinup_tf.algos import get_algo
        return get_algo(self.name)(*args, **kwargs)

    @property
    def __doc__(self):
        from spinup_tf.algos import algo_docstring
        return algo_docstring(self.name)

    def __reduce__(self):
        return Algorithm, (self.name,)

    def __repr__(self):
        return 'spinup_tf.%s' % self.name


def __getattr__(name):
    if name in ALGORITHMS:
        algorithm = globals()[name] = Algorithm(name)
        return algorithm
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


def __dir__():
    return sorted(list(globals()) + list(ALGORITHMS))


__all__ = list(ALGORITHMS)
