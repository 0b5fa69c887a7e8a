"""Experiment grids, Spinning Up style, run one after the other, in parallel, or on Ray.

``ExperimentGrid`` follows ``spinup/utils/run_utils.py``::

    eg = ExperimentGrid('td3_pendulum')
    eg.add('env_name', 'Pendulum-v1', '', True)
    eg.add('seed', [0, 10, 20])
    eg.add('ac_kwargs:hidden_sizes', [[64, 64], [256, 256]], 'hid')
    eg.add('epochs', 5)
    eg.run(td3, workers=2)

* a key with ``:`` builds nested dicts (``ac_kwargs:hidden_sizes`` -> ``ac_kwargs={...}``);
* a variant's name is the grid name plus ``_{shorthand}{value}`` for every key that has several
  values or was added with ``in_name=True`` (never for ``seed``; a key whose values are all
  booleans appears as ``_{shorthand}`` when True and not at all when False); the default
  shorthand is the first three letters of each ``:``-separated part, joined by ``-``;
* each variant runs as ``thunk(**variant)`` with ``seed`` (0 if the grid has none) and
  ``logger_kwargs`` for the folder ``DATA_DIR/NAME/NAME_s{seed}/``; an ``env_name`` value
  becomes ``env_fn``.

``ExperimentGrid.run`` hands the variants to ``spinup_tf.tools.launch.run_experiments``, which
runs them one after the other, in parallel worker processes or on Ray, and returns one
``spinup_tf.tools.results.VariantResult`` per variant. ``num_cpu`` (Spinning Up's MPI processes
per variant) is accepted and ignored.

This module imports neither TensorFlow nor numpy at import time.
"""
import os.path as osp
import string
from dataclasses import dataclass

from spinup_tf.tools.launch import announce, check_launch, run_experiments
from spinup_tf.tools.results import DIV_LINE_WIDTH


# ------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------
def all_bools(vals):
    return all(isinstance(v, bool) for v in vals)


def valid_str(v):
    """A value (or list of values) as a string fit for a path: lower case, ``[-_a-z0-9]``."""
    if hasattr(v, '__name__'):
        return valid_str(v.__name__)
    if isinstance(v, (tuple, list)):
        return '-'.join(valid_str(x) for x in v)
    valid_chars = '-_%s%s' % (string.ascii_letters, string.digits)
    return ''.join(c if c in valid_chars else '-' for c in str(v).lower())


def _get_nested(variant, key):
    """``variant['a']['b']`` for ``key='a:b'`` (a flat key wins when present)."""
    if key in variant:
        return variant[key]
    k0, rest = key.split(':', 1)
    return _get_nested(variant[k0], rest)


def _copy_containers(v):
    """Fresh dicts and lists (so that variants never share mutable values), other objects as is."""
    if isinstance(v, dict):
        return {k: _copy_containers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy_containers(x) for x in v]
    return v


def _merge(base, top):
    out = dict(base)
    for k, v in top.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _unflatten(flat):
    """``{'a:b': 1, 'a:c': 2, 'd': 3}`` -> ``{'a': {'b': 1, 'c': 2}, 'd': 3}``.

    A plain dict value of ``a`` is the base that nested ``a:...`` keys are merged into.
    """
    out, nested = {}, {}
    for k, v in flat.items():
        if ':' in k:
            k0, rest = k.split(':', 1)
            nested.setdefault(k0, {})[rest] = v
        else:
            out[k] = v
    for k0, sub in nested.items():
        base = out.get(k0, {})
        if not isinstance(base, dict):
            raise ValueError('key %r has both a value and nested keys %s'
                             % (k0, ', '.join('%s:%s' % (k0, s) for s in sub)))
        out[k0] = _merge(base, _unflatten(sub))
    return out



# ------------------------------------------------------------------------------------------
# Experiments
# ------------------------------------------------------------------------------------------
@dataclass
class Experiment:
    """One variant, ready to run: ``thunk(**kwargs)`` writes into ``output_dir``.

    Unpacks as ``fn, kwargs = experiment``.
    """
    exp_name: str
    seed: object
    thunk: object
    kwargs: dict
    output_dir: str

    @property
    def label(self):
        return osp.basename(osp.normpath(self.output_dir))

    def __iter__(self):
        return iter((self.thunk, self.kwargs))


# ------------------------------------------------------------------------------------------
# The grid
# ------------------------------------------------------------------------------------------
class ExperimentGrid:
    """Tool for running many experiments given hyperparameter ranges (Spinning Up's API)."""

    def __init__(self, name=''):
        self.keys = []
        self.vals = []
        self.shs = []
        self.in_names = []
        self.name(name)

    def name(self, _name):
        if not isinstance(_name, str):
            raise TypeError('the grid name has to be a string, got %r' % (_name,))
        self._name = _name

    def print(self):
        """Print the parameters, their shorthands and values, and the number of variants."""
        from spinup_tf.utils.logx import colorize, convert_json
        print('=' * DIV_LINE_WIDTH)
        base_msg = 'ExperimentGrid %s runs over parameters:\n'
        name_insert = '[' + self._name + ']'
        if len(base_msg % name_insert) <= DIV_LINE_WIDTH:
            msg = base_msg % name_insert
        else:
            msg = base_msg % (name_insert + '\n')
        print(colorize(msg, color='green', bold=True))
        for k, v, sh in zip(self.keys, self.vals, self.shs):
            color_k = colorize(k.ljust(40), color='cyan', bold=True)
            print('', color_k, '[' + sh + ']' if sh is not None else '', '\n')
            for val in v:
                print('\t' + str(convert_json(val)))
            print()
        nvars_total = self.num_variants()
        if 'seed' in self.keys:
            nvars_seedless = nvars_total // len(self.vals[self.keys.index('seed')])
        else:
            nvars_seedless = nvars_total
        print(' Variants, counting seeds: '.ljust(40), nvars_total)
        print(' Variants, not counting seeds: '.ljust(40), nvars_seedless)
        print()
        print('=' * DIV_LINE_WIDTH, flush=True)

    def num_variants(self):
        n = 1
        for v in self.vals:
            n *= len(v)
        return n

    def _default_shorthand(self, key):
        """First three letters of each ``:``-separated part (non-alphanumerics sheared off),
        joined by ``-``: ``ac_kwargs:hidden_sizes`` -> ``ac-hid``."""
        valid_chars = '%s%s' % (string.ascii_letters, string.digits)

        def shear(x):
            return ''.join(z for z in x[:3] if z in valid_chars)
        return '-'.join(shear(x) for x in key.split(':'))

    def add(self, key, vals, shorthand=None, in_name=False):
        """Add a parameter ``key`` with its values ``vals`` (a list, or one value).

        Args:
            key (str): name of the parameter; ``a:b`` is ``b`` inside the dict ``a``.
            vals: a list of values, or a single value (anything that is not a list).
            shorthand (str): short name used in variant names (default: see
                ``_default_shorthand``).
            in_name (bool): put this parameter in variant names even with one value.
        """
        if not isinstance(key, str):
            raise TypeError('a key must be a string, got %r' % (key,))
        if shorthand is not None and not isinstance(shorthand, str):
            raise TypeError('a shorthand must be a string, got %r' % (shorthand,))
        if key in self.keys:
            raise ValueError('key %r was already added to the grid' % key)
        if not isinstance(vals, list):
            vals = [vals]
        if not vals:
            raise ValueError('key %r needs at least one value' % key)
        if shorthand is None:
            shorthand = self._default_shorthand(key)
        self.keys.append(key)
        self.vals.append(vals)
        self.shs.append(shorthand)
        self.in_names.append(in_name)

    def variant_name(self, variant):
        """The experiment name of ``variant`` (a dict as ``variants()`` makes them).

        The grid name, then ``_{shorthand}{value}`` for each parameter with several values or
        ``in_name=True``; never the seed, so that seeds of one configuration share a name.
        """
        var_name = self._name
        for k, v, sh, inn in zip(self.keys, self.vals, self.shs, self.in_names):
            if (len(v) > 1 or inn) and not k == 'seed':
                param_name = sh if sh is not None else k
                var_name += self._name_part(param_name, v, _get_nested(variant, k))
        return var_name.lstrip('_')

    def _name_part(self, param_name, vals, value):
        """Spinning Up's rule for one parameter's part of a variant name."""
        param_name = valid_str(param_name)
        if all_bools(vals):
            return ('_' + param_name) if value else ''
        return '_' + param_name + valid_str(value)

    def _variants(self, keys, vals):
        """Every combination of values, the first key varying slowest."""
        if len(keys) == 1:
            pre_variants = [dict()]
        else:
            pre_variants = self._variants(keys[1:], vals[1:])
        variants = []
        for val in vals[0]:
            for pre_v in pre_variants:
                v = {keys[0]: val}
                v.update(pre_v)
                variants.append(v)
        return variants

    def variants(self):
        """A list of dicts, one per combination of values, with ``a:b`` keys nested:
        ``{'a:b': 1, 'a:c': 2}`` gives ``{'a': {'b': 1, 'c': 2}}``."""
        if not self.keys:
            return [dict()]
        flat = self._variants(self.keys, self.vals)
        return [_unflatten({k: _copy_containers(v) for k, v in var.items()}) for var in flat]

    def experiments(self, thunk, data_dir=None, datestamp=False):
        """The variants as ``Experiment`` objects, checked and ready to run (nothing runs).

        ``thunk`` is a callable, or the name of a grid key whose values are callables.
        Each variant gets ``seed`` (0 if the grid has none) and ``logger_kwargs`` (unless it
        has them already) for ``data_dir/NAME/NAME_s{seed}``; an ``env_name`` value is turned
        into ``env_fn``. Raises ``ValueError`` when two variants would share a folder.
        """
        from spinup_tf.utils.logx import setup_logger_kwargs
        if not (callable(thunk) or (isinstance(thunk, str) and thunk in self.keys)):
            raise TypeError('thunk must be a callable or the name of a grid key, got %r'
                            % (thunk,))
        out, folders = [], {}
        for var in self.variants():
            exp_name = self.variant_name(var)
            if isinstance(thunk, str):
                thunk_ = var.pop(thunk)
            else:
                thunk_ = thunk
            seed = var.pop('seed', 0)
            kwargs = dict(var, seed=seed)
            if 'env_name' in kwargs:
                from spinup_tf.utils.envs import EnvFn
                kwargs['env_fn'] = EnvFn(kwargs.pop('env_name'))
            if 'logger_kwargs' not in kwargs:
                kwargs['logger_kwargs'] = setup_logger_kwargs(exp_name, seed, data_dir,
                                                              datestamp)
            output_dir = kwargs['logger_kwargs'].get('output_dir') or ''
            key = osp.abspath(output_dir)
            if key in folders:
                raise ValueError('variants %s (seed %s) and %s (seed %s) would both write to '
                                 '%s; give them different values or names'
                                 % (folders[key][0], folders[key][1], exp_name, seed,
                                    output_dir))
            folders[key] = (exp_name, seed)
            out.append(Experiment(exp_name, seed, thunk_, kwargs, output_dir))
        return out

    def run(self, thunk, num_cpu=1, data_dir=None, datestamp=False, workers=1,
            backend='local', address=None):
        """Run every variant with ``thunk``; returns one ``VariantResult`` per variant.

        Args:
            thunk: the function to run (e.g. ``td3``), or the name of a grid key whose
                values are functions.
            num_cpu: ignored (Spinning Up's MPI processes per variant; there is no MPI here).
            data_dir (str): where run folders go (default ``./data``).
            datestamp (bool): prefix folders with the date and time.
            workers (int or 'auto'): with ``backend='local'``, how many variants run at once,
                each in its own process ('auto': the physical cores that other processes
                leave idle, at least 1; see ``threads.auto_workers``). 1 runs them
                one after the other in this process.
            backend (str): ``'local'`` or ``'ray'`` (one Ray task with ``num_cpus=1`` per
                variant; the cluster's CPUs decide how many run at once).
            address (str): Ray cluster to connect to (``ray.init(address=...)``); None starts
                a local Ray instance for the run (or uses the one already initialised).

        A failing variant is reported and the others go on. Ctrl-C (or SIGTERM) lets running
        variants save their model and stop, prints the summary, and is raised again.
        """
        workers = check_launch(workers, backend, address)
        experiments = self.experiments(thunk, data_dir, datestamp)
        self.print()
        announce(experiments)
        return run_experiments(experiments, workers=workers, backend=backend, address=address)
