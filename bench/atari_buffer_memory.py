"""The memory of a 100k-transition Atari replay buffer, ours against SB3's, measured.

    python bench/atari_buffer_memory.py [--size 100000] [--sb3]

Each buffer is filled in a fresh child process with ``size`` transitions of ``(4, 84, 84)``
uint8 frame stacks (each stack the last one shifted by a new frame; games of 1000 steps,
starting with their first frame repeated, as gymnasium's frame stack pads), and the child
reports its peak resident memory (``ru_maxrss``) over that of the same child before the
buffer was made. ``frames``: what an Atari run uses,
``spinup_tf.loops.frame_stack_buffer.FrameStackReplayBuffer`` (each frame once); ``stacks``: our
``ReplayBuffer`` of whole stacks (each observation once); ``sb3``: SB3's ``ReplayBuffer``
(``optimize_memory_usage=False``, its default and DQN's), which keeps ``obs`` and
``next_obs``. Prints figures; asserts nothing.
"""
import argparse
import json
import resource
import subprocess
import sys

SHAPE = (4, 84, 84)


def fill(kind, size):
    import numpy as np
    rng = np.random.RandomState(0)
    pool = rng.randint(0, 256, size=(67,) + SHAPE[1:]).astype(np.uint8)

    def stack(t):  # the game's frames t-3..t, its first one repeated before it started
        start = t - t % 1000
        return pool[[max(j, start) % 67 for j in range(t - 3, t + 1)]]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if kind in ('frames', 'stacks'):
        from spinup_tf.loops.replay_buffer import ReplayBuffer
        from spinup_tf.loops.frame_stack_buffer import FrameStackReplayBuffer
        buf = FrameStackReplayBuffer(SHAPE, 6, size) if kind == 'frames' else \
            ReplayBuffer(SHAPE, 6, size, obs_dtype=np.uint8)
        eye = np.eye(6, dtype=np.float32)
        for t in range(size):
            buf.store(stack(t), eye[t % 6], 1.0, stack(t + 1), 0.0,
                      episode_end=t % 1000 == 998)
    else:
        from gymnasium.spaces import Box, Discrete
        from stable_baselines3.common.buffers import ReplayBuffer
        buf = ReplayBuffer(size, Box(0, 255, SHAPE, np.uint8), Discrete(6), device='cpu')
        for t in range(size):
            buf.add(stack(t)[None], stack(t + 1)[None], np.array([t % 6]),
                    np.array([1.0]), np.array([t % 1000 == 999]), [{}])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(kind=kind, size=size, mb=(peak - before) / 1024.0)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=100000)
    parser.add_argument('--sb3', action='store_true', help='also SB3 (needs stable-baselines3)')
    parser.add_argument('--child', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fill(args.child, args.size)
        return
    frame_bytes = args.size * 4 * 84 * 84
    print('one copy of %d frame stacks: %.0f MiB' % (args.size, frame_bytes / 2 ** 20))
    for kind in ['frames', 'stacks'] + (['sb3'] if args.sb3 else []):
        out = subprocess.run([sys.executable, __file__, '--child', kind, '--size',
                              str(args.size)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print('%-6s replay buffer of %d transitions: %.0f MiB resident' % (kind, r['size'],
                                                                            r['mb']))


if __name__ == '__main__':
    main()
