"""How the command line calls an algorithm: ``AlgoThunk(name)(**kwargs)``, with names
(activations, registered actor-critics) and a source document's quirk flags turned into
what the algorithm takes."""
from spinup_tf.algos import LOOPS, get_algo, parameters
from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.flags import ACTIVATIONS


def check_activation(name):
    if not isinstance(name, str) or name not in ACTIVATIONS:
        raise UserInputError('unknown activation %r; choose from %s'
                             % (name, ', '.join(ACTIVATIONS)))


def _activation(name):
    from spinup_tf.utils.tf1 import activation_by_name
    check_activation(name)
    return activation_by_name(name)


def quirk_parameters(name):
    """The quirk flags of ``name``'s loop (``spinup_tf.reproductions.hooks.QUIRK_FLAGS``) as
    keyword-only parameters with their defaults (imported only when a run names one)."""
    import inspect
    from spinup_tf.reproductions.hooks import quirk_flags
    return {k: inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=f.default)
            for k, f in quirk_flags(LOOPS[name]).items()}


class AlgoThunk:
    """``AlgoThunk('td3')(**kwargs)`` runs the algorithm; picklable, so that a grid can send
    it to worker processes or Ray. In the worker: an activation given by name in
    ``ac_kwargs`` becomes the ``tf.nn`` function (TensorFlow is imported there, not when
    unpickling), an actor-critic given by name the registered function
    (``spinup_tf.reproductions.networks``), and the quirk flags (keywords that are not the
    algorithm's) the run's ``hooks`` (``spinup_tf.reproductions.hooks.make_hooks``)."""

    def __init__(self, name):
        self.name = name
        self.__name__ = name

    def __call__(self, **kwargs):
        ac_kwargs = kwargs.get('ac_kwargs')
        if isinstance(ac_kwargs, dict) and isinstance(ac_kwargs.get('activation'), str):
            kwargs['ac_kwargs'] = dict(ac_kwargs, activation=_activation(ac_kwargs['activation']))
        if isinstance(kwargs.get('actor_critic'), str):
            from spinup_tf.reproductions.networks import resolve_actor_critic
            kwargs['actor_critic'] = resolve_actor_critic(kwargs['actor_critic'])
        params = parameters(self.name)
        quirks = {k: kwargs.pop(k) for k in list(kwargs)
                  if k not in params and k not in ('env_fn', 'logger_kwargs', 'hooks')}
        if quirks:
            from spinup_tf.reproductions.hooks import make_hooks
            kwargs['hooks'] = make_hooks(**quirks)
        return get_algo(self.name)(**kwargs)

    def __repr__(self):
        return 'AlgoThunk(%r)' % self.name
