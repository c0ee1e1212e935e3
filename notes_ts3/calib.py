"""Calibrate: round length and seat-0 win share for seat 0 (uniform or cards-first) vs a p-cards opponent."""
import numpy as np, time, sys
import uno_env
from uno_env.core.actions import NUM_PLAY_ACTIONS
rng = np.random.default_rng(0)
def pick(mask, p):
    legal = np.flatnonzero(mask)
    cards = legal[legal < NUM_PLAY_ACTIONS]
    if len(cards) and rng.random() < p:
        return int(rng.choice(cards))
    return int(rng.choice(legal))
env = uno_env.env(num_players=2, max_players=2, episode="round", max_turns=10_000)
for p0, p1 in [(0, 0), (0, 0.5), (0, 0.7), (0, 0.9), (0, 1), (1, 0), (1, 0.5), (1, 0.9), (0.5,0.5)]:
    wins, lens, n = 0, [], 60
    t = time.time()
    for g in range(n):
        env.reset(seed=g)
        d = 0
        for agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            if term or trunc:
                if agent == "player_0" and rew > 0: wins += 1
                env.step(None); continue
            d += 1
            env.step(pick(obs["action_mask"], p0 if agent == "player_0" else p1))
        lens.append(d)
    print(f"p0={p0} p1={p1} seat0 wins {wins}/{n} decisions median {np.median(lens):.0f} mean {np.mean(lens):.0f} ({time.time()-t:.1f}s)", flush=True)
