"""The memory of a 100k-transition Atari replay buffer, ours against SB3's, measured.

    python bench/atari_buffer_memory.py [--size 100000] [--sb3]

Each buffer is filled in a fresh child process with ``size`` transitions of ``(4, 84, 84)``
uint8 frame stacks (episodes of 1000 steps, as a game's lives give), and the child reports its
peak resident memory (``ru_maxrss``) over that of the same child before the buffer was made.
Ours (``spinup_tf.loops.replay_buffer.ReplayBuffer``) keeps each observation once; SB3's
``ReplayBuffer`` (``optimize_memory_usage=False``, its default and DQN's) keeps ``obs`` and
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
    frames = rng.randint(0, 256, size=(64,) + SHAPE).astype(np.uint8)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if kind == 'ours':
        from spinup_tf.loops.replay_buffer import ReplayBuffer
        buf = ReplayBuffer(SHAPE, 6, size, obs_dtype=np.uint8)
        eye = np.eye(6, dtype=np.float32)
        for t in range(size):
            buf.store(frames[t % 64], eye[t % 6], 1.0, frames[(t + 1) % 64], 0.0,
                      episode_end=(t % 1000 == 999))
    else:
        from gymnasium.spaces import Box, Discrete
        from stable_baselines3.common.buffers import ReplayBuffer
        buf = ReplayBuffer(size, Box(0, 255, SHAPE, np.uint8), Discrete(6), device='cpu')
        for t in range(size):
            buf.add(frames[t % 64][None], frames[(t + 1) % 64][None], np.array([t % 6]),
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
    print('one copy of %d frame stacks: %.0f MB' % (args.size, frame_bytes / 2 ** 20))
    for kind in ['ours'] + (['sb3'] if args.sb3 else []):
        out = subprocess.run([sys.executable, __file__, '--child', kind, '--size',
                              str(args.size)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print('%-4s replay buffer of %d transitions: %.0f MB resident' % (kind, r['size'],
                                                                         r['mb']))


if __name__ == '__main__':
    main()
