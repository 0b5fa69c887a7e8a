"""What the command line needs to know about an algorithm without importing it (and so
TensorFlow): its parameters and docstring, read from its source with ``ast``, and the
activation names.

``run.py ALGO --help`` and every argument error answer from here in a fraction of a second.
The source is the one description: ``tests/test_cli.py`` checks that what is read here is
what ``inspect.signature`` gives once the module is imported.
"""
import ast
import functools
import importlib.util
import inspect

ACTIVATIONS = ('relu', 'tanh', 'elu', 'selu', 'sigmoid', 'softplus', 'leaky_relu', 'relu6',
               'swish', 'gelu')
"""The activations ``--act`` and ``ac_kwargs['activation']`` accept by name (``tf.nn.<name>``)."""

_CALLS = {'int': int, 'float': float, 'bool': bool, 'str': str, 'dict': dict, 'list': list,
          'tuple': tuple}


class Reference:
    """A default that names a function (``core.mlp_td3_actor_critic``): its source text, and
    ``__name__`` as the function's would be."""

    def __init__(self, source):
        self.source = source
        self.__name__ = source.rsplit('.', 1)[-1]

    def __repr__(self):
        return self.source

    def __eq__(self, other):
        return isinstance(other, Reference) and other.source == self.source

    def __hash__(self):
        return hash(self.source)


@functools.lru_cache(maxsize=None)
def _module_tree(module):
    spec = importlib.util.find_spec(module)
    with open(spec.origin, encoding='utf-8') as f:
        return ast.parse(f.read(), spec.origin)


def _value(node):
    """The value of a default: a literal, ``int(1e6)``/``dict()``-like calls of builtins on
    literals, or a :class:`Reference` for a name."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _CALLS:
        args = [_value(a) for a in node.args]
        kwargs = {k.arg: _value(k.value) for k in node.keywords}
        return _CALLS[node.func.id](*args, **kwargs)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return Reference(ast.unparse(node))
    raise ValueError('cannot read the default %s without running the module'
                     % ast.unparse(node))


def function_def(module, name):
    """The ``ast.FunctionDef`` of top-level function ``name`` of ``module``."""
    for node in _module_tree(module).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise LookupError('%s has no function %s' % (module, name))


def module_dict(module, name):
    """The module-level ``name = dict(...)`` (or ``{...}``) of ``module``, evaluated."""
    for node in _module_tree(module).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return _value(node.value)
    return {}


def option_comments(module):
    """``{option: comment}``: the comment after each entry of ``module``'s ``OPTIONS =
    dict(...)`` (one line each), which ``--help`` prints beside the option."""
    spec = importlib.util.find_spec(module)
    with open(spec.origin, encoding='utf-8') as f:
        lines = f.read().splitlines()
    comments = {}
    for node in _module_tree(module).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == 'OPTIONS'
                                                for t in node.targets) \
                and isinstance(node.value, ast.Call):
            for kw in node.value.keywords:
                line = lines[kw.value.end_lineno - 1]
                if '#' in line:
                    comments[kw.arg] = line.split('#', 1)[1].strip()
    return comments


def signature_parameters(module, name, options_module=None):
    """``{name: inspect.Parameter}`` of function ``name`` in ``module``, in order, with
    ``**options`` replaced by ``options_module``'s ``OPTIONS`` (keyword-only)."""
    args = function_def(module, name).args
    params = {}
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + \
        [_value(d) for d in args.defaults]
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    for arg, default in zip(positional, defaults):
        params[arg.arg] = inspect.Parameter(arg.arg, kind, default=default)
    if args.vararg is not None:
        params[args.vararg.arg] = inspect.Parameter(args.vararg.arg,
                                                    inspect.Parameter.VAR_POSITIONAL)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params[arg.arg] = inspect.Parameter(
            arg.arg, inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if default is None else _value(default))
    if args.kwarg is not None:
        if options_module is None:
            params[args.kwarg.arg] = inspect.Parameter(args.kwarg.arg,
                                                       inspect.Parameter.VAR_KEYWORD)
        else:
            for opt, default in module_dict(options_module, 'OPTIONS').items():
                params[opt] = inspect.Parameter(opt, inspect.Parameter.KEYWORD_ONLY,
                                                default=default)
    return params


def docstring(module, name):
    """The docstring of function ``name`` of ``module``, as ``inspect.getdoc`` gives it."""
    return ast.get_docstring(function_def(module, name)) or ''


ALGORITHM_SOURCES = {
    'ddpg': ('spinup_tf.algos.ddpg', 'ddpg', 'spinup_tf.loops.off_policy'),
    'td3': ('spinup_tf.algos.td3', 'td3', 'spinup_tf.loops.off_policy'),
    'trpo': ('spinup_tf.algos.trpo', 'trpo', 'spinup_tf.loops.on_policy'),
    'npg': ('spinup_tf.algos.trpo', 'npg', 'spinup_tf.loops.on_policy'),
    'vpg': ('spinup_tf.algos.vpg', 'vpg', 'spinup_tf.loops.on_policy'),
    'ppo': ('spinup_tf.algos.ppo', 'ppo', 'spinup_tf.loops.on_policy'),
    'sac': ('spinup_tf.algos.sac', 'sac', 'spinup_tf.loops.off_policy'),
    'dqn': ('spinup_tf.algos.dqn', 'dqn', 'spinup_tf.loops.off_policy'),
}
"""Where each algorithm of ``run.py`` is written: ``name: (module, function, loop module)``.
Names only: nothing is imported (``spinup_tf.algos`` is the registry that imports them)."""

OFF_POLICY_ACTIONS = {'ddpg': ('box',), 'td3': ('box',), 'sac': ('box', 'discrete'),
                      'dqn': ('discrete',)}
"""The action spaces each off-policy algorithm handles (``'box'``: bounded flat ``Box``;
``'discrete'``: ``Discrete``). The on-policy ones handle both (``envs.check_discrete_or_box``)."""

IMAGE_ALGORITHMS = ('dqn', 'sac', 'vpg', 'ppo', 'trpo', 'npg')
"""The algorithms whose networks read image observations (``core.features``: the Nature-DQN
encoder first); the others need flat observations."""


def algorithm_parameters(name):
    """The flags of algorithm ``name`` (``inspect.Parameter``, in order): its signature's
    parameters, with ``**options`` replaced by its loop's ``OPTIONS``. Read from the source:
    nothing is imported."""
    module, fn, loop = ALGORITHM_SOURCES[name]
    return signature_parameters(module, fn, loop)
