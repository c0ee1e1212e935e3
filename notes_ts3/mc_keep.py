"""Under uniform play of seat 0 vs a p-cards opponent: eventual win share after keep vs play-drawn, and draw vs card."""
import numpy as np, sys
import uno_env
from uno_env.core.actions import NUM_PLAY_ACTIONS, DRAW, KEEP
rng = np.random.default_rng(0)
p1 = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
def pick(mask, p):
    legal = np.flatnonzero(mask); cards = legal[legal < NUM_PLAY_ACTIONS]
    if len(cards) and rng.random() < p: return int(rng.choice(cards))
    return int(rng.choice(legal))
env = uno_env.env(num_players=2, max_players=2, episode="round", max_turns=10_000)
stats = {k: [0, 0] for k in ["keep", "playdrawn", "draw", "card"]}
for g in range(400):
    env.reset(seed=g); marks = []
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            if agent == "player_0": win = rew > 0
            env.step(None); continue
        m = obs["action_mask"]
        a = pick(m, 0.0 if agent == "player_0" else p1)
        if agent == "player_0":
            if m[KEEP]: marks.append("keep" if a == KEEP else "playdrawn")
            elif m[DRAW] and m[:NUM_PLAY_ACTIONS].any(): marks.append("draw" if a == DRAW else ("card" if a < NUM_PLAY_ACTIONS else None))
        env.step(a)
    for k in marks:
        if k: stats[k][0] += win; stats[k][1] += 1
for k, (w, n) in stats.items(): print(k, w, n, round(w / max(n, 1), 3))
