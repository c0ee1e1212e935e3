import numpy as np, time
import uno_env
from uno_env.core.actions import NUM_PLAY_ACTIONS
rng = np.random.default_rng(0)
def q_pick(mask, p):
    legal = np.flatnonzero(mask); cards = legal[legal < NUM_PLAY_ACTIONS]; other = legal[legal >= NUM_PLAY_ACTIONS]
    if len(cards) and len(other) and rng.random() >= p: return int(rng.choice(other))
    return int(rng.choice(legal))
env = uno_env.env(num_players=2, max_players=2, episode="round", max_turns=10_000)
for p1 in [0.5, 0.7]:
    wins, lens, n = 0, [], 40
    for g in range(n):
        env.reset(seed=g); d = 0
        for agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            if term or trunc:
                if agent == "player_0" and rew > 0: wins += 1
                env.step(None); continue
            d += 1
            m = obs["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(m))) if agent == "player_0" else q_pick(m, p1))
        lens.append(d)
    print(p1, wins, n, np.median(lens), np.mean(lens), flush=True)
