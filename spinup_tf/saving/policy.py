"""Load a run folder's policy without running any graph code from the folder.

A run folder's ``tf1_save/`` is a TF SavedModel. Loading it with the SavedModel loader runs
the graph stored in the folder (its init op, then its ``pi`` output on every action); a
crafted model can hold any TensorFlow op there: file writes and reads included. So
:func:`load_policy` never reads ``saved_model.pb``:

1. it reads ``config.json`` (plain JSON: the algorithm, the actor-critic by its registered
   name, ``ac_kwargs`` of numbers, names and lists) and makes the env it names, for its
   spaces;
2. it builds the policy's graph from this project's code: the algorithm's registered
   actor-critic (``spinup_tf.algos.core``, ``spinup_tf.reproductions.networks``), under the
   scope the algorithm uses (``main/`` for DDPG, TD3, SAC), on placeholders of the env's
   spaces, and the deterministic action (TD3's and DDPG's ``pi``, SAC's ``mu``, the
   on-policy Gaussian's mean or the categorical's argmax);
3. it reads only variable *values* from ``tf1_save*/variables/`` with TensorFlow's
   checkpoint reader (``tf.train.load_checkpoint``, which parses the files and executes
   nothing), after checking every variable of the rebuilt graph against the file by name,
   shape and dtype, and the total size against the data files;
4. ``model_info.json`` gives only the ``--normalize_obs`` statistics, checked to be finite
   numbers of the observation's size.

Every file is opened without following symbolic links (``spinup_tf.utils.safe_files``).
Anything that does not fit is one ``UserInputError``: the CLI prints it as an ``error:``
line with exit status 2. The SavedModel stays the format runs write, for other tools.
"""
import inspect
import os
import os.path as osp
import stat

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.safe_files import check_readable_dir, read_json

CONFIG_FILE = 'config.json'
MODEL_DIR = 'tf1_save'
MODEL_INFO_FILE = 'model_info.json'
VARIABLES_PREFIX = osp.join('variables', 'variables')  # inside a SavedModel folder
SET_BY_ALGORITHM = ('x', 'a', 'action_space', 'policy')
MAX_LAYER = 1 << 20  # units of one hidden layer that config.json may ask for


def load_run_config(run_dir):
    """``run_dir/config.json`` as a dict (``UserInputError`` when the folder or the file
    cannot be read, or is not a JSON object)."""
    check_readable_dir(run_dir)
    path = osp.join(run_dir, CONFIG_FILE)
    if not osp.lexists(path):
        raise UserInputError('no %s in %s: it is not a run folder' % (CONFIG_FILE, run_dir))
    return read_json(path)


def load_env_spec(run_dir, config=None):
    """``(env_id, env_kwargs)`` recorded in ``run_dir/config.json`` (``env_kwargs``: the
    ``--env_kwargs`` of the run, ``{}`` when none)."""
    config = load_run_config(run_dir) if config is None else config
    path = osp.join(run_dir, CONFIG_FILE)
    env_id = config.get('env_id')
    if not env_id:
        raise UserInputError('%s does not record an env id' % path)
    if not isinstance(env_id, str):
        raise UserInputError('%s: env_id must be a gymnasium id (a string), got %s'
                             % (path, _short(env_id)))
    env_fn = config.get('env_fn')
    env_kwargs = env_fn.get('env_kwargs') if isinstance(env_fn, dict) else None
    if env_kwargs is None:
        return env_id, {}
    if not isinstance(env_kwargs, dict):
        raise UserInputError('%s: env_fn.env_kwargs must be a dict of keyword arguments, got '
                             '%s' % (path, _short(env_kwargs)))
    return env_id, dict(env_kwargs)


def run_max_ep_len(run_dir, config=None):
    """The run's ``max_ep_len`` (its episodes' cap), or None when ``config.json`` records
    none; anything but a positive integer is a ``UserInputError``."""
    config = load_run_config(run_dir) if config is None else config
    value = config.get('max_ep_len')
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UserInputError('%s: max_ep_len must be a positive integer, got %s'
                             % (osp.join(run_dir, CONFIG_FILE), _short(value)))
    return value


def model_dir(run_dir, itr=None, best=False):
    """The SavedModel folder of ``run_dir``: ``tf1_save``, ``tf1_save{itr}`` or
    ``tf1_save_best``."""
    return osp.join(run_dir, MODEL_DIR + ('%d' % itr if itr is not None else '')
                    + ('_best' if best else ''))


class Policy:
    """A rebuilt policy: ``policy(o)`` is the deterministic action at observation ``o``
    (normalised first as in training); ``policy.raw(o)`` skips the normalisation."""

    def __init__(self, act_fn, normalize):
        self._act_fn, self._normalize = act_fn, normalize

    def raw(self, o):
        return self._act_fn(np.asarray(o, dtype=np.float32)[None])[0]

    def __call__(self, o):
        return self.raw(self._normalize(o))


def load_policy(run_dir, itr=None, best=False):
    """Rebuild the policy saved in run folder ``run_dir`` (see the module docstring).

    Args:
        run_dir (str): the run folder (holding ``config.json`` and ``tf1_save/``).
        itr (int): load ``tf1_save{itr}`` instead of the last save.
        best (bool): load ``tf1_save_best/``, the model of the epoch with the best mean
            deterministic test return.

    Returns:
        ``(get_action, session)``: ``get_action(o)`` (a :class:`Policy`) maps an observation
        ``(obs_dim,)`` to an action; ``session.close()`` frees it.
    """
    check_readable_dir(run_dir)
    folder = model_dir(run_dir, itr, best)
    if not osp.lexists(folder):
        raise UserInputError('no saved model in %s (expected folder %s)' % (run_dir, folder))
    _check_real_dir(folder)
    info_path = osp.join(folder, MODEL_INFO_FILE)
    try:
        info = read_json(info_path)
    except (FileNotFoundError, UserInputError) as e:
        raise UserInputError('the model in %s is unreadable (%s)'
                             % (folder, str(e) or 'no %s' % MODEL_INFO_FILE)) from None
    spec = PolicySpec(run_dir, load_run_config(run_dir))
    normalize = _observation_normalizer(info, spec.obs_dim, info_path)
    session, act_fn = spec.build(_variable_reader(folder))
    return Policy(act_fn, normalize), session


class PolicySpec:
    """What ``config.json`` says about a run's policy, checked, with the env's spaces."""

    def __init__(self, run_dir, config):
        from spinup_tf.algos import ALGOS, LOOPS
        self.path = osp.join(run_dir, CONFIG_FILE)
        algo = config.get('algo')
        if not isinstance(algo, str) or algo not in ALGOS:
            raise UserInputError('%s names no algorithm of this project (algo %s; known: %s)'
                                 % (self.path, _short(algo), ', '.join(ALGOS)))
        self.algo, self.loop = algo, LOOPS[algo]
        self.actor_critic = self._actor_critic(config.get('actor_critic'))
        self.ac_kwargs = self._ac_kwargs(config.get('ac_kwargs'))
        env_id, env_kwargs = load_env_spec(run_dir, config)
        self.obs_space, self.act_space = env_spaces(env_id, env_kwargs)
        from spinup_tf.utils.envs import (check_action_space, check_discrete_or_box,
                                          observation_shape)
        from spinup_tf.utils.flags import OFF_POLICY_ACTIONS, IMAGE_ALGORITHMS
        self.obs_dim = observation_shape(self.obs_space, algo,
                                         images=algo in IMAGE_ALGORITHMS)
        if self.loop == 'off_policy':
            check_action_space(self.act_space, algo, OFF_POLICY_ACTIONS.get(algo, ('box',)))
        else:
            check_discrete_or_box(self.act_space, algo)
        self.policy_space = self.act_space
        action_range = config.get('action_range')  # the TensorLayer seed's [-r, r] policy
        if action_range is not None:
            if isinstance(action_range, bool) or not isinstance(action_range, (int, float)) \
                    or not 0 < action_range < float('inf'):
                raise UserInputError('%s: action_range must be a positive number, got %s'
                                     % (self.path, _short(action_range)))
            from gymnasium.spaces import Box
            self.policy_space = Box(-float(action_range), float(action_range),
                                    shape=self.act_space.shape, dtype=np.float32)
        self.clip = bool(config.get('clip_actions')) and self.loop == 'on_policy'
        dueling = config.get('dueling', False)  # DQN's flag, which shapes its network
        if not isinstance(dueling, bool):
            raise UserInputError('%s: dueling must be true or false, got %s'
                                 % (self.path, _short(dueling)))
        if dueling:
            self.ac_kwargs['dueling'] = True

    def _actor_critic(self, name):
        from spinup_tf.algos import get_algo
        default = inspect.signature(get_algo(self.algo)).parameters['actor_critic'].default
        if name is None or (isinstance(name, str) and (
                name == default.__name__ or name.endswith('.' + default.__name__))):
            return default
        if not isinstance(name, str):
            raise UserInputError('%s: actor_critic must be a registered name, got %s'
                                 % (self.path, _short(name)))
        from spinup_tf.reproductions.networks import resolve_actor_critic
        try:
            return resolve_actor_critic(name)
        except UserInputError:
            raise UserInputError('%s names the actor-critic %s, which is not one of this '
                                 'project\'s: a policy is only rebuilt from the project\'s '
                                 'own code, so it cannot be loaded here'
                                 % (self.path, _short(name))) from None

    def _ac_kwargs(self, ac_kwargs):
        from spinup_tf.utils.flags import ACTIVATIONS
        from spinup_tf.utils.tf1 import activation_by_name
        if ac_kwargs is None:
            return {}
        if not isinstance(ac_kwargs, dict):
            raise UserInputError('%s: ac_kwargs must be a dict, got %s'
                                 % (self.path, _short(ac_kwargs)))
        params = inspect.signature(self.actor_critic).parameters
        out = {}
        for key, value in ac_kwargs.items():
            if key in SET_BY_ALGORITHM or key not in params:
                raise UserInputError('%s: ac_kwargs key %s is not a setting of %s'
                                     % (self.path, _short(key), self.actor_critic.__name__))
            if key == 'hidden_sizes':
                if not isinstance(value, list) or not value or not all(
                        isinstance(h, int) and not isinstance(h, bool) and 0 < h <= MAX_LAYER
                        for h in value):
                    raise UserInputError('%s: hidden_sizes must be a list of positive layer '
                                         'sizes, got %s' % (self.path, _short(value)))
                out[key] = list(value)
            elif key in ('activation', 'output_activation'):
                if value is None:
                    out[key] = None
                    continue
                short = value.rsplit('.', 1)[-1] if isinstance(value, str) else None
                if short not in ACTIVATIONS:
                    raise UserInputError('%s: unknown %s %s; known: %s'
                                         % (self.path, key, _short(value),
                                            ', '.join(sorted(ACTIVATIONS))))
                out[key] = activation_by_name(short)
            elif isinstance(value, (bool, int, float)) and value == value:
                out[key] = value
            else:
                raise UserInputError('%s: ac_kwargs %s must be a number or True/False, got %s'
                                     % (self.path, key, _short(value)))
        return out

    def build(self, reader):
        """A session on the rebuilt graph with every variable read from ``reader`` (a
        :class:`_VariableReader`), and the callable deterministic action."""
        from spinup_tf.utils.tf1 import tf, make_session, placeholder_from_space, \
            placeholder, RANDOM_COUNTERS
        graph = tf.Graph()
        with graph.as_default():
            try:
                action, x_ph = self._graph(tf, placeholder_from_space, placeholder)
            except UserInputError:
                raise
            except Exception as e:  # the project's own code, fed config.json's settings
                raise UserInputError('%s: its actor-critic settings do not build a policy '
                                     '(%s: %s)' % (self.path, type(e).__name__,
                                                   str(e).splitlines()[0][:200]
                                                   if str(e) else '')) from None
            counters = graph.get_collection(RANDOM_COUNTERS)
            restored = [v for v in tf.global_variables() if v not in counters]
            values = reader.values_for(restored)
            init_counters = tf.variables_initializer(counters)
        graph.finalize()  # nothing below adds an op: the values go in through initializers
        sess = make_session(graph)
        try:
            for var, value in zip(restored, values):
                var.load(value, sess)
            sess.run(init_counters)
        except BaseException:
            sess.close()
            raise
        act = sess.make_callable(action, feed_list=[x_ph])
        if self.clip:
            low, high = self.act_space.low, self.act_space.high
            raw = act

            def act(x):
                return np.clip(raw(x), low, high)
        return sess, act

    def _graph(self, tf, placeholder_from_space, placeholder):
        """The policy's graph as the algorithm builds it: ``(action, x_ph)``."""
        from gymnasium.spaces import Discrete
        if self.loop == 'off_policy':
            x_ph = placeholder(self.obs_dim)  # (batch, obs_dim) or images (batch, H, W, C)
            discrete = isinstance(self.act_space, Discrete)  # actions fed one-hot
            a_ph = tf.placeholder(tf.float32, (None, self.act_space.n if discrete
                                               else self.act_space.shape[0]))
            with tf.variable_scope('main'):
                outputs = self.actor_critic(x_ph, a_ph, action_space=self.policy_space,
                                            **self.ac_kwargs)
            return outputs[0], x_ph  # TD3's and DDPG's pi, SAC's mu, DQN's greedy action
        x_ph = placeholder_from_space(self.obs_space)
        a_ph = placeholder_from_space(self.act_space)
        outputs = self.actor_critic(x_ph, a_ph, action_space=self.act_space, **self.ac_kwargs)
        info = outputs[3]
        if isinstance(self.act_space, Discrete):  # loops.on_policy.deterministic_action
            return tf.argmax(info['logp_all'], axis=1, output_type=tf.int32), x_ph
        return info['mu'], x_ph


def env_spaces(env_id, env_kwargs):
    """``(observation_space, action_space)`` of ``gym.make(env_id, **env_kwargs)``; an env
    that cannot be made is a ``UserInputError``."""
    from spinup_tf.utils.envs import make_checked_env
    env = make_checked_env(env_id, env_kwargs, probe=False)
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()


def _check_real_dir(path):
    try:
        st = os.lstat(path)
    except OSError as e:
        raise UserInputError('cannot read %s: %s' % (path, (e.strerror or str(e)).lower())
                             ) from None
    if stat.S_ISLNK(st.st_mode):
        raise UserInputError('%s is a symbolic link; a run folder must hold its own files'
                             % path)
    if not stat.S_ISDIR(st.st_mode):
        raise UserInputError('%s is not a folder' % path)


class _VariableReader:
    """The values of a SavedModel's ``variables/`` checkpoint, read with TF's checkpoint
    reader (no graph, no op runs)."""

    def __init__(self, folder, reader, data_bytes):
        self.folder, self.reader, self.data_bytes = folder, reader, data_bytes

    def values_for(self, variables):
        """The saved value of each of ``variables``, checked by name, shape and dtype."""
        from spinup_tf.utils.tf1 import tf
        shapes = self.reader.get_variable_to_shape_map()
        dtypes = self.reader.get_variable_to_dtype_map()
        total = 0
        for var in variables:
            name = var.op.name
            want_shape, want_dtype = var.shape.as_list(), var.dtype.base_dtype
            if name not in shapes:
                raise UserInputError('the model in %s does not fit the policy its config.json '
                                     'builds: it has no variable %s' % (self.folder, name))
            if list(shapes[name]) != want_shape:
                raise UserInputError('the model in %s does not fit the policy its config.json '
                                     'builds: %s has shape %s, the policy needs %s'
                                     % (self.folder, name, list(shapes[name]), want_shape))
            if tf.as_dtype(dtypes[name]) != want_dtype:
                raise UserInputError('the model in %s does not fit the policy its config.json '
                                     'builds: %s is %s, the policy needs %s'
                                     % (self.folder, name, tf.as_dtype(dtypes[name]).name,
                                        want_dtype.name))
            total += int(np.prod(want_shape, dtype=np.int64)) * want_dtype.size
        if total > self.data_bytes:
            raise UserInputError('the model in %s claims %d bytes of values, more than its '
                                 'data files hold (%d): it is corrupt'
                                 % (self.folder, total, self.data_bytes))
        try:
            values = [self.reader.get_tensor(var.op.name) for var in variables]
        except Exception as e:  # TF's own error types for a damaged data file
            raise UserInputError('the model in %s is unreadable (%s)'
                                 % (self.folder, type(e).__name__)) from None
        for var, value in zip(variables, values):
            value = np.asarray(value)
            if value.dtype.kind == 'f' and not np.all(np.isfinite(value)):
                raise UserInputError('the model in %s holds weights that are not finite numbers '
                                     '(NaN or infinite) in %s: its actions would be NaN, so it '
                                     'is not played' % (self.folder, var.op.name))
        return values


def _variable_reader(folder):
    """A :class:`_VariableReader` of ``folder/variables/`` after checking that the folder
    and each of its files are real (no symbolic links, no devices)."""
    from spinup_tf.utils.tf1 import tf
    variables = osp.join(folder, 'variables')
    if not osp.lexists(variables):
        raise UserInputError('the model in %s is unreadable (no variables/ folder)' % folder)
    _check_real_dir(variables)
    data_bytes, names = 0, set()
    with os.scandir(variables) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                raise UserInputError('%s is %s; a model folder must hold its own regular '
                                     'files' % (entry.path, 'a symbolic link'
                                                if entry.is_symlink() else 'not a file'))
            names.add(entry.name)
            if entry.name.startswith('variables.data-'):
                data_bytes += st.st_size
    if 'variables.index' not in names:
        raise UserInputError('the model in %s is unreadable (no variables/variables.index)'
                             % folder)
    from spinup_tf.utils.checkpoint_index import check_index
    try:  # every declared shape bounded before TensorFlow sees one (it aborts on some)
        check_index(osp.join(folder, VARIABLES_PREFIX))
    except UserInputError as e:
        raise UserInputError('the model in %s is unreadable (%s)' % (folder, e)) from None
    try:
        reader = tf.train.load_checkpoint(osp.join(folder, VARIABLES_PREFIX))
    except Exception as e:  # DataLossError and friends: a damaged index
        raise UserInputError('the model in %s is unreadable (%s)'
                             % (folder, type(e).__name__)) from None
    return _VariableReader(folder, reader, data_bytes)


def _observation_normalizer(info, obs_dim, path):
    """``f(o)`` normalising as the model was trained (``model_info.json``'s
    ``normalization.obs``, checked), the identity without statistics."""
    from spinup_tf.utils.normalize import MODEL_KEY, RunningMeanStd, normalize_obs
    stats = info.get(MODEL_KEY)
    if stats is None:
        return lambda o: o
    obs = stats.get('obs') if isinstance(stats, dict) else 'bad'
    if obs is None:
        return lambda o: o
    bad = UserInputError('%s: %s.obs must hold the observation statistics (mean and m2: %d '
                         'finite numbers each, count: an integer >= 0), got %s'
                         % (path, MODEL_KEY, obs_dim, _short(obs)))
    if not isinstance(obs, dict) or set(obs) != {'mean', 'm2', 'count'}:
        raise bad
    count = obs['count']
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise bad
    try:
        mean = np.asarray(obs['mean'], dtype=np.float64)
        m2 = np.asarray(obs['m2'], dtype=np.float64)
    except (ValueError, TypeError):
        raise bad from None
    if mean.shape != (obs_dim,) or m2.shape != (obs_dim,) or not (
            np.all(np.isfinite(mean)) and np.all(np.isfinite(m2)) and np.all(m2 >= 0)):
        raise bad
    rms = RunningMeanStd()
    rms.load_state_dict(obs)
    mean, var = rms.mean, rms.var
    return lambda o: normalize_obs(o, mean, var)


def _short(value, limit=80):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'
