"""Screen DQN settings for the Tianshou example: one trial per call, one line of JSON appended to the log."""
from __future__ import annotations
import argparse, json, os, sys, time
from typing import cast
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "ecosystem"))
import numpy as np
import torch
import tianshou_dqn as ex
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net
from uno_env.core.actions import NUM_PLAY_ACTIONS


class PCards(MARLRandomDiscreteMaskedOffPolicyAlgorithm):
    p = 0.5
    class Policy(MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy):
        p = 0.5
        def forward(self, batch, state=None, **kwargs):
            legal = np.array(batch.obs.mask, dtype=bool)
            plays = legal[:, :NUM_PLAY_ACTIONS].any(axis=1) & (np.random.rand(len(legal)) < self.p)
            legal[plays, NUM_PLAY_ACTIONS:] = False
            logits = np.random.rand(*legal.shape)
            logits[~legal] = -np.inf
            return Batch(act=logits.argmax(axis=-1))


class QCards(MARLRandomDiscreteMaskedOffPolicyAlgorithm):
    """Plays a card with probability p when one plays and another legal action exists (else that other action)."""
    class Policy(MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy):
        p = 0.0
        def forward(self, batch, state=None, **kwargs):
            legal = np.array(batch.obs.mask, dtype=bool)
            other = legal[:, NUM_PLAY_ACTIONS:].any(axis=1)
            avoid = legal[:, :NUM_PLAY_ACTIONS].any(axis=1) & other & (np.random.rand(len(legal)) >= self.p)
            legal[avoid, :NUM_PLAY_ACTIONS] = False
            logits = np.random.rand(*legal.shape)
            logits[~legal] = -np.inf
            return Batch(act=logits.argmax(axis=-1))


class QNet(torch.nn.Module):
    def __init__(self, env, hidden, layers, activation, dueling):
        super().__init__()
        space = env.observation_space["observation"]
        self.register_buffer("scale", torch.as_tensor(np.maximum(space.high, 1.0), dtype=torch.float32))
        duel = (dict(hidden_sizes=[hidden]), dict(hidden_sizes=[hidden])) if dueling else None
        self.net = Net(state_shape=space.shape, action_shape=env.action_space.n, hidden_sizes=[hidden] * layers,
                       activation=getattr(torch.nn, activation), dueling_param=duel)
    def forward(self, obs, state=None, info=None):
        return self.net(torch.as_tensor(obs, dtype=torch.float32) / self.scale, state=state, info=info)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opp", default="uniform")  # uniform | cards | p<float>
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--epoch-steps", type=int, default=10_000)
    ap.add_argument("--envs", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--act", default="ReLU")
    ap.add_argument("--dueling", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--eps-start", type=float, default=1.0)
    ap.add_argument("--eps", type=float, default=0.05)
    ap.add_argument("--eps-decay", type=int, default=30_000)
    ap.add_argument("--cycles", type=int, default=16)
    ap.add_argument("--buffer", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--ups", type=float, default=0.1)
    ap.add_argument("--target", type=int, default=100)
    ap.add_argument("--huber", type=float, default=0.0)
    ap.add_argument("--collect", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval", type=int, default=100)
    ap.add_argument("--tag", default="")
    ap.add_argument("--log", default=os.path.join(os.path.dirname(__file__), "trials.jsonl"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed); np.random.seed(a.seed)
    env = ex.make_env(10_000)
    net = QNet(env, a.hidden, a.layers, a.act, a.dueling)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=a.eps_start, eps_inference=a.eps_start)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=a.lr), gamma=a.gamma,
                  n_step_return_horizon=a.cycles * 2, target_update_freq=a.target,
                  huber_loss_delta=a.huber or None)
    if a.opp == "uniform":
        opp = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    elif a.opp == "cards":
        opp = ex.CardsFirstRandom(action_space=env.action_space)
    elif a.opp.startswith("q"):
        QCards.Policy.p = float(a.opp[1:])
        opp = QCards(action_space=env.action_space)
    else:
        PCards.Policy.p = float(a.opp[1:])
        opp = PCards(action_space=env.action_space)
    alg = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opp], env=env)
    def set_eps(epoch, env_step):
        e = a.eps_start + (a.eps - a.eps_start) * min(1.0, env_step / max(1, a.eps_decay))
        policy.set_eps_training(e); policy.set_eps_inference(e)
    envs = DummyVectorEnv([lambda: ex.make_env(10_000) for _ in range(a.envs)])
    envs.seed(a.seed)
    buf = VectorReplayBuffer(a.buffer, a.envs)
    col = Collector(alg, envs, buf, exploration_noise=True)
    t0 = time.time()
    col.reset()
    col.collect(n_step=a.batch * a.envs)
    alg.run_training(OffPolicyTrainerParams(
        training_collector=col, max_epochs=max(1, a.steps // a.epoch_steps), epoch_num_steps=a.epoch_steps,
        collection_step_num_env_steps=2 * a.envs * a.collect, batch_size=a.batch,
        update_step_num_gradient_steps_per_sample=a.ups, test_collector=None,
        training_fn=set_eps, verbose=False, show_progress=False))
    train_s = time.time() - t0
    data = buf.sample(0)[0]
    ends = np.flatnonzero(data.terminated | data.truncated)
    rews = data.rew[ends]
    # win share over the rounds still in the buffer, and over its last-finished half (by order of indices in each sub-buffer: approximate)
    won = int((rews[:, 0] > 0).sum()); rounds = len(ends)
    own = data.obs.agent_id == "player_0"
    obs, mask = data.obs.obs[own], np.asarray(data.obs.mask[own], bool)
    with torch.no_grad():
        q = net(obs[-20000:])[0].numpy()
    mask = mask[-20000:]
    q[~mask] = -np.inf
    g = q.argmax(1)
    cards = mask[:, :NUM_PLAY_ACTIONS].any(1) & mask[:, 55]
    keeps = mask[:, 56] & mask[:, :NUM_PLAY_ACTIONS].any(1)
    p_draw = float((g[cards] == 55).mean()) if cards.any() else -1
    p_keep = float((g[keeps] == 56).mean()) if keeps.any() else -1
    torch.save(net.state_dict(), os.path.join(os.path.dirname(a.log), f'{a.tag}.pt'))
    t1 = time.time()
    w, n, lo, hi = ex.win_rate(policy, a.eval, seed=10_000)
    rec = dict(vars(a), env_steps=int(col.collect_step), train_s=round(train_s, 1), eval_s=round(time.time() - t1, 1),
               buf_rounds=rounds, buf_won=won, p_draw=round(p_draw, 3), p_keep=round(p_keep, 3), won=w, played=n, lo=round(lo, 3), hi=round(hi, 3),
               load=os.getloadavg()[0])
    del rec["log"]
    print(json.dumps(rec), flush=True)
    with open(a.log, "a") as f:
        f.write(json.dumps(rec) + "\n")

if __name__ == "__main__":
    main()
