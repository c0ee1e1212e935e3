"""Load a screened Q-net (<tag>.pt) and play it greedily vs uniform random: outcomes and what it picks."""
import sys, os, collections
sys.path.insert(0, os.path.dirname(__file__))
import numpy as np, torch
import screen, tianshou_dqn as ex
import uno_env
from uno_env.core.actions import NUM_PLAY_ACTIONS
tag = sys.argv[1]; dueling = int(sys.argv[2]) if len(sys.argv) > 2 else 0
torch.set_num_threads(1)
net = screen.QNet(ex.make_env(10_000), 128, 2, "ReLU", dueling)
net.load_state_dict(torch.load(f"{tag}.pt"))
rng = np.random.default_rng(0)
env = uno_env.env(num_players=2, max_players=2, episode="round", max_turns=10_000)
out = collections.Counter(); picks = collections.Counter()
for g in range(40):
    env.reset(seed=100 + g); d = 0; me = f"player_{g % 2}"; res = "abandoned"
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            if agent == me: res = "won" if rew > 0 else "lost"
            env.step(None); continue
        d += 1
        if d > 1000: break
        m = obs["action_mask"].astype(bool)
        if agent == me:
            with torch.no_grad(): q = net(obs["observation"][None])[0][0].numpy()
            q[~m] = -np.inf; a = int(q.argmax())
            legal = np.flatnonzero(m)
            kind = "card" if a < NUM_PLAY_ACTIONS else str(a)
            ctx = ("cards+" + ",".join(str(x) for x in legal[legal >= NUM_PLAY_ACTIONS])) if m[:NUM_PLAY_ACTIONS].any() else ",".join(map(str, legal))
            picks[(ctx, kind)] += 1
        else:
            a = int(rng.choice(np.flatnonzero(m)))
        env.step(a)
    out[res] += 1
print(dict(out))
for k, v in picks.most_common(25): print(v, k)
