"""The one home for TF1-style graph helpers.

Everything here builds static-graph pieces through ``tf.compat.v1``: placeholders, a dense
layer and ``mlp`` on ``tf.compat.v1.get_variable`` (so ``variable_scope(..., reuse=True)``
shares weights, and no Keras layer is involved), variable lookup by exact scope prefix, and
the target-network ops (``tf.group`` of ``tf.assign``).

Import ``tf`` from this module: it is ``tensorflow.compat.v1`` with eager execution disabled.
"""
from collections import namedtuple

# oneDNN (TF's default on x86 Linux) is left as TensorFlow sets it: its matmuls make the fused
# TD3 update about 8 % faster than Eigen's (the backward pass's transposed products most),
# and same-seed reruns stay byte-identical with it, for every algorithm and both paths.

import numpy as np

from spinup_tf.utils.quiet import import_tensorflow
from spinup_tf.utils.flags import ACTIVATIONS

tf = import_tensorflow()  # tensorflow.compat.v1, without the start-up notices of a CPU machine

tf.disable_eager_execution()
# TF1's own while_loop/cond (Enter/Switch/Merge frames) rather than TF2's functional ones:
# the fused update window (spinup_tf.fast.window) runs about 1.5x faster with them on a CPU.
tf.disable_control_flow_v2()
tf.get_logger().setLevel('ERROR')  # deprecation notices of the v1 API we use on purpose

EPS = 1e-8
LOG_STD_MAX = 2  # the squashed Gaussian policy's log-std is clipped to [LOG_STD_MIN, LOG_STD_MAX]
LOG_STD_MIN = -20


# --------------------------------------------------------------------------------------------
# Placeholders
# --------------------------------------------------------------------------------------------
def placeholder(dim=None, dtype=tf.float32, name=None):
    """A batch placeholder: shape ``(batch,)`` for ``dim=None``, ``(batch, dim)`` for an int,
    ``(batch, *dim)`` for a tuple (an image's ``(H, W, C)``)."""
    if isinstance(dim, tuple):
        return tf.placeholder(dtype=dtype, shape=(None,) + dim, name=name)
    return tf.placeholder(dtype=dtype, shape=(None, dim) if dim else (None,), name=name)


def placeholders(*dims):
    """One float32 batch placeholder per entry of ``dims`` (``None`` gives a ``(batch,)`` one)."""
    return [placeholder(dim) for dim in dims]


def placeholder_from_space(space, name=None):
    """A batch placeholder matching a gymnasium space.

    ``Box`` of shape ``(n,)`` gives float32 ``(batch, n)``, of an image's shape ``(H, W, C)``
    float32 ``(batch, H, W, C)``; ``Discrete`` gives int32 ``(batch,)``.
    """
    from gymnasium.spaces import Box, Discrete
    if isinstance(space, Box) and len(space.shape) == 3:
        return placeholder(tuple(int(n) for n in space.shape), name=name)
    if isinstance(space, Box):
        return placeholder(int(np.prod(space.shape)), name=name)
    if isinstance(space, Discrete):
        return placeholder(None, dtype=tf.int32, name=name)
    raise NotImplementedError('no placeholder for space %r' % (space,))


# --------------------------------------------------------------------------------------------
# Activations by name (command line, config.json)
# --------------------------------------------------------------------------------------------


def activation_by_name(name):
    """``tf.nn.<name>`` for a name in ``ACTIVATIONS`` (or a dotted name ending in one, as
    config.json records a function); ``ValueError`` otherwise."""
    short = str(name).rsplit('.', 1)[-1]
    if not isinstance(name, str) or short not in ACTIVATIONS:
        raise ValueError('unknown activation %r; choose from %s' % (name, ', '.join(ACTIVATIONS)))
    fn = getattr(tf.nn, short, None)
    if fn is None:  # newer activations (gelu) exist only in the TF2 namespace
        import tensorflow
        fn = getattr(tensorflow.nn, short)
    return fn


# --------------------------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------------------------
DENSE_LAYERS = 'spinup_tf_dense_layers'
DenseLayer = namedtuple('DenseLayer', 'inputs outputs kernel bias activation')
"""One ``dense`` call: ``outputs = activation(inputs @ kernel + bias)``."""


def dense(x, units, activation=None, name='dense', kernel_initializer=None,
          bias_initializer=None):
    """Fully connected layer ``activation(x @ kernel + bias)`` on ``tf.get_variable``.

    Args:
        x: ``(batch, in_dim)`` input.
        units (int): output width.
        name (str): variable scope of this layer; variables are ``name/kernel`` and ``name/bias``
            inside the enclosing scope, so building it again under ``reuse=True`` shares them.
        kernel_initializer: defaults to glorot-uniform (as ``tf.layers.dense``).
        bias_initializer: defaults to zeros.

    Returns:
        ``(batch, units)`` tensor.
    """
    in_dim = x.shape.as_list()[-1]
    if kernel_initializer is None:
        kernel_initializer = tf.glorot_uniform_initializer()
    if bias_initializer is None:
        bias_initializer = tf.zeros_initializer()
    with tf.variable_scope(name):
        kernel = tf.get_variable('kernel', shape=(in_dim, units), dtype=tf.float32,
                                 initializer=kernel_initializer)
        bias = tf.get_variable('bias', shape=(units,), dtype=tf.float32,
                               initializer=bias_initializer)
    # bias_add rather than `+`: Grappler fuses MatMul + BiasAdd (+ activation) into one op.
    y = tf.nn.bias_add(tf.matmul(x, kernel), bias)
    out = activation(y) if activation is not None else y
    # Recorded so that ``spinup_tf.fast.mirrors`` can mirror a chain of layers in numpy.
    tf.add_to_collection(DENSE_LAYERS, DenseLayer(x, out, kernel, bias, activation))
    return out


def conv2d(x, filters, kernel_size, stride, activation=tf.nn.relu, name='conv'):
    """2-D convolution ``activation(conv(x, kernel) + bias)``, ``'VALID'`` padding, on
    ``tf.get_variable`` (``name/kernel`` ``(k, k, in_channels, filters)`` and ``name/bias``).

    Args:
        x: ``(batch, H, W, in_channels)`` float input.
    Returns:
        ``(batch, (H - k) // stride + 1, (W - k) // stride + 1, filters)`` tensor.
    """
    in_channels = x.shape.as_list()[-1]
    with tf.variable_scope(name):
        kernel = tf.get_variable('kernel', shape=(kernel_size, kernel_size, in_channels, filters),
                                 dtype=tf.float32, initializer=tf.glorot_uniform_initializer())
        bias = tf.get_variable('bias', shape=(filters,), dtype=tf.float32,
                               initializer=tf.zeros_initializer())
    y = tf.nn.bias_add(tf.nn.conv2d(x, kernel, strides=[1, stride, stride, 1],
                                    padding='VALID'), bias)
    return activation(y) if activation is not None else y


def mlp(x, hidden_sizes=(32,), activation=tf.tanh, output_activation=None,
        kernel_initializer=None, output_kernel_initializer=None):
    """Multi-layer perceptron; the last entry of ``hidden_sizes`` is the output width.

    Layers are named ``dense``, ``dense_1``, ``dense_2``... in the enclosing variable scope
    (the names ``tf.layers.dense`` used), so two calls in scopes with the same name and
    ``reuse=True`` share all weights.

    Args:
        x: ``(batch, in_dim)`` input.
        hidden_sizes: widths of the layers, output layer last.
        kernel_initializer: initializer of hidden kernels (glorot-uniform if None).
        output_kernel_initializer: initializer of the output kernel (defaults to
            ``kernel_initializer``).
    Returns:
        ``(batch, hidden_sizes[-1])`` tensor.
    """
    hidden_sizes = list(hidden_sizes)
    if output_kernel_initializer is None:
        output_kernel_initializer = kernel_initializer
    for i, h in enumerate(hidden_sizes[:-1]):
        x = dense(x, h, activation, name=_layer_name(i), kernel_initializer=kernel_initializer)
    return dense(x, hidden_sizes[-1], output_activation, name=_layer_name(len(hidden_sizes) - 1),
                 kernel_initializer=output_kernel_initializer)


def _layer_name(i):
    return 'dense' if i == 0 else 'dense_%d' % i


# --------------------------------------------------------------------------------------------
# Random draws that a checkpoint can continue
# --------------------------------------------------------------------------------------------
RANDOM_COUNTERS = 'spinup_tf_random_counters'


def draw_seed():
    """``(2,)`` int64 seed of one in-graph random draw: ``[site, n]``.

    TensorFlow's stateful random ops keep their stream inside the kernel, so a run restored
    from a checkpoint would draw a fresh stream. Instead every call site of a random op
    (``random_normal`` etc. below) gets its own counter variable ``random_counters/site<i>``
    (a global variable, so the checkpoint keeps it), incremented each time the op runs, and
    draws with ``tf.random.stateless_*`` seeded by ``[key, counter]``, where ``key`` mixes
    the graph seed (``tf.set_random_seed``) and the site's index ``i``. Same graph, same
    seed, same counters: the same numbers, before and after a resume.
    """
    graph = tf.get_default_graph()
    site = len(graph.get_collection(RANDOM_COUNTERS))
    with tf.init_scope(), tf.name_scope('random_counters/'):  # outside loops and scopes
        counter = tf.Variable(np.int64(0), trainable=False, name='site%d' % site)
    graph.add_to_collection(RANDOM_COUNTERS, counter)
    key = ((graph.seed or 0) * 1000003 + site) % (2 ** 62)
    return tf.stack([tf.constant(key, tf.int64), tf.assign_add(counter, np.int64(1))])


def random_normal(shape, stddev=1.0):
    """``tf.random_normal(shape, stddev=stddev)`` drawn from a checkpointed stream."""
    return stddev * tf.random.stateless_normal(shape, seed=draw_seed())


def random_uniform_int(shape, maxval):
    """Integers uniform on ``[0, maxval)`` (``maxval`` a scalar int32 tensor), as
    ``tf.random_uniform(shape, 0, maxval, dtype=tf.int32)``, from a checkpointed stream."""
    return tf.random.stateless_uniform(shape, seed=draw_seed(), minval=0, maxval=maxval,
                                       dtype=tf.int32)


def random_categorical(logits):
    """One sample per row of ``logits`` ``(batch, n)``: ``(batch,)`` int64, as
    ``tf.squeeze(tf.random.categorical(logits, 1), 1)``, from a checkpointed stream."""
    return tf.squeeze(tf.random.stateless_categorical(logits, 1, seed=draw_seed()), axis=1)


# --------------------------------------------------------------------------------------------
# Variables
# --------------------------------------------------------------------------------------------
def get_vars(scope, collection=tf.GraphKeys.GLOBAL_VARIABLES):
    """Variables whose name lies under ``scope`` exactly, in creation order.

    ``get_vars('main/q')`` does NOT match ``main/q1/...`` (Spinning Up's substring match did);
    only ``main/q/...`` and ``main/q`` itself. Optimizer slots (``.../Adam``) live under their
    variable's name, so pass ``collection=tf.GraphKeys.TRAINABLE_VARIABLES`` to exclude them.
    """
    scope = scope.rstrip('/')
    out = []
    for v in tf.get_collection(collection):
        name = v.op.name
        if name == scope or name.startswith(scope + '/'):
            out.append(v)
    return out


def get_trainable_vars(scope):
    """Trainable variables under ``scope`` (exact prefix), in creation order."""
    return get_vars(scope, tf.GraphKeys.TRAINABLE_VARIABLES)


def count_vars(scope):
    """Number of trainable scalars under ``scope``."""
    return int(sum(np.prod(v.shape.as_list()) for v in get_trainable_vars(scope)))


def paired_vars(src_scope, dst_scope):
    """Trainable variables of two scopes, paired by their name relative to the scope.

    Raises ``ValueError`` when the two scopes do not hold the same names and shapes.
    """
    src = get_trainable_vars(src_scope)
    dst = get_trainable_vars(dst_scope)
    src_names = [v.op.name[len(src_scope) + 1:] for v in src]
    dst_names = [v.op.name[len(dst_scope) + 1:] for v in dst]
    if src_names != dst_names:
        raise ValueError('scopes %r and %r hold different variables: %s vs %s'
                         % (src_scope, dst_scope, src_names, dst_names))
    for a, b in zip(src, dst):
        if a.shape.as_list() != b.shape.as_list():
            raise ValueError('shape mismatch between %s and %s' % (a.op.name, b.op.name))
    return list(zip(src, dst))


def target_init_op(main_scope='main', target_scope='target'):
    """``tf.group`` of ``tf.assign(v_targ, v_main)`` for every paired variable."""
    return tf.group([tf.assign(v_targ, v_main)
                     for v_main, v_targ in paired_vars(main_scope, target_scope)])


def polyak_update_op(polyak, main_scope='main', target_scope='target'):
    """Polyak averaging of the target network towards the main one.

    .. math:: \\theta_{\\text{targ}} \\leftarrow \\rho \\theta_{\\text{targ}} + (1-\\rho) \\theta

    with :math:`\\rho` = ``polyak``; returned as a ``tf.group`` of ``tf.assign``, one per
    paired variable (the algorithm files write the same ``tf.group`` out in full).
    """
    return tf.group([tf.assign(v_targ, polyak * v_targ + (1 - polyak) * v_main)
                     for v_main, v_targ in paired_vars(main_scope, target_scope)])


# --------------------------------------------------------------------------------------------
# Session
# --------------------------------------------------------------------------------------------
def make_session(graph=None, intra_op_threads=None, inter_op_threads=None):
    """A ``tf.Session`` with thread settings that suit small networks on few cores.

    One intra-op thread keeps small matmuls cheap and makes float reductions run in a fixed
    order, which is part of what makes seeded runs repeat exactly. Unset thread counts come
    from ``spinup_tf.utils.threads.session_threads()``: the grid launcher's decision for this
    run (``SPINUP_TF_THREADS``), else 1 intra-op and 2 inter-op threads.
    """
    from spinup_tf.utils.threads import session_threads
    intra, inter = session_threads()
    config = tf.ConfigProto(
        intra_op_parallelism_threads=intra if intra_op_threads is None else intra_op_threads,
        inter_op_parallelism_threads=inter if inter_op_threads is None else inter_op_threads,
        allow_soft_placement=True)
    return tf.Session(graph=graph, config=config)


def lazy_callable(sess, fetches, feed_list=()):
    """``sess.make_callable(fetches, feed_list)``, made at the first call: making one prunes
    and optimises its part of the graph, which a run that never calls it (the fast engine's
    numpy policy acts instead of the graph's) should not wait for at start-up."""
    made = []

    def call(*args):
        if not made:
            made.append(sess.make_callable(fetches, feed_list=list(feed_list)))
        return made[0](*args)
    return call
