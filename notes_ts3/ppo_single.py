"""Tianshou PPO on the single-agent env (opponent inside: the env's default cards-first random seat)."""
import argparse, json, os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "ecosystem"))
import gymnasium as gym
import numpy as np
import torch
from against_random import win_rate_against_random
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OnPolicyTrainerParams
from tianshou.utils.net.common import ActionReprNet, Net
from tianshou.utils.net.discrete import DiscreteCritic
import uno_env


class MaskedActor(ActionReprNet):
    """Tianshou's Net over the scaled observation; illegal actions' logits pushed to -1e9 (mask from info)."""
    def __init__(self, space, n, hidden):
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(np.maximum(space.high, 1.0), dtype=torch.float32))
        self.net = Net(state_shape=space.shape, action_shape=n, hidden_sizes=[hidden, hidden], activation=torch.nn.Tanh)
    def forward(self, obs, state=None, info=None):
        if hasattr(obs, "obs"):
            vec, mask = obs.obs, torch.as_tensor(np.asarray(obs.mask), dtype=torch.bool)
        else:
            vec, mask = obs, None
        logits, _ = self.net(torch.as_tensor(vec, dtype=torch.float32) / self.scale)
        if mask is not None:
            logits = logits.masked_fill(~mask, -1e9)
        return logits, state


class Scaled(torch.nn.Module):
    def __init__(self, space, hidden):
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(np.maximum(space.high, 1.0), dtype=torch.float32))
        self.net = Net(state_shape=space.shape, hidden_sizes=[hidden, hidden], activation=torch.nn.Tanh)
    def get_output_dim(self):
        return self.net.get_output_dim()
    def forward(self, obs, state=None, info=None):
        vec = obs.obs if hasattr(obs, "obs") else obs
        return self.net(torch.as_tensor(vec, dtype=torch.float32) / self.scale)


class MaskInObs(gym.Wrapper):
    """Tianshou's convention (as its PettingZooEnv): the observation is {"obs", "mask"}; a buffer row's
    info belongs to its obs_next, so a mask kept only in info would be the next state's in the update."""
    def __init__(self, env):
        super().__init__(env)
        self.observation_space = gym.spaces.Dict({"obs": env.observation_space,
                                                  "mask": gym.spaces.MultiBinary(int(env.action_space.n))})
    def reset(self, **kw):
        obs, info = self.env.reset(**kw)
        return {"obs": obs, "mask": np.asarray(info["action_mask"], np.int8)}, info
    def step(self, action):
        obs, rew, term, trunc, info = self.env.step(action)
        return {"obs": obs, "mask": np.asarray(info["action_mask"], np.int8)}, rew, term, trunc, info


def make_env():
    return MaskInObs(gym.make(uno_env.GYM_ID, num_players=2, max_players=2, episode="round", max_turns=1_000))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--epoch-steps", type=int, default=4096)
    ap.add_argument("--collect", type=int, default=1024)
    ap.add_argument("--envs", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    torch.set_num_threads(1); torch.manual_seed(a.seed); np.random.seed(a.seed)
    env = make_env()
    actor = MaskedActor(env.observation_space['obs'], env.action_space.n, a.hidden)
    critic = DiscreteCritic(preprocess_net=Scaled(env.observation_space['obs'], a.hidden))
    policy = DiscreteActorPolicy(actor=actor, action_space=env.action_space, deterministic_eval=True)
    algo = PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=a.lr), gamma=a.gamma, max_grad_norm=a.clip)
    envs = DummyVectorEnv([make_env for _ in range(a.envs)])
    envs.seed(a.seed)
    col = Collector(algo, envs, VectorReplayBuffer(a.collect, a.envs))
    t0 = time.time()
    col.reset()
    res = algo.run_training(OnPolicyTrainerParams(
        training_collector=col, max_epochs=a.epochs, epoch_num_steps=a.epoch_steps,
        collection_step_num_env_steps=a.collect, update_step_num_repetitions=a.reps, batch_size=a.batch,
        test_collector=None, verbose=False, show_progress=False))
    train_s = time.time() - t0
    def scores(o, m):
        with torch.no_grad():
            return actor(o[None])[0][0].numpy()
    w, n, lo, hi = win_rate_against_random(scores, games=100, seed=10_000)
    rec = dict(vars(a), algo="ppo-single", env_steps=int(col.collect_step), train_s=round(train_s, 1), won=w, played=n,
               lo=round(lo, 3), hi=round(hi, 3), load=os.getloadavg()[0])
    print(json.dumps(rec), flush=True)
    with open(os.path.join(os.path.dirname(__file__), "trials.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")

if __name__ == "__main__":
    main()
