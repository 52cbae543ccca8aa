"""Dr. GRPO on kgym with TRL: two turns per rollout, return r1 + 0.4 r2, the gym's feedback tokens
masked from the loss (env_mask), reward `kevin` or `roofline`. Runs on a GPU with a model you name:

    build/kgym serve --suite ../shared/data/kernelbench --devices cuda:0 --port 8000 &
    python examples/trainers/trl_grpo.py --model Qwen/Qwen2.5-Coder-1.5B-Instruct --tasks L1/19,L1/23 \
        --url http://127.0.0.1:8000 --reward kevin --steps 50

Each turn, every rollout of the batch is generated at once and the whole group is judged in one
request (`kgym_client.trl.kernel_rollout_func`, POST /step_many); the first turn's feedback is
the second turn's user message. The reward is the episode's return from its first turn, computed by
the gym (sum, gamma 0.4). `roofline` needs the task's floor: a suite exported by `kgym tasks export`
and `kgym serve --roofline-bandwidth-gbs ... --roofline-peak-tflops ...` (docs/server.md).
"""
import argparse

from kgym_client import KgymClient
from kgym_client.trl import kernel_rollout_func, kgym_return_reward


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a causal LM on the Hugging Face hub or a local folder")
    ap.add_argument("--url", default="http://127.0.0.1:8000", help="kgym serve's URL")
    ap.add_argument("--tasks", default="L1/19", help="comma-separated task ids of the server's suite")
    ap.add_argument("--reward", default="kevin", choices=["kevin", "roofline"])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--num-generations", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=2048)
    ap.add_argument("--feedback-tokens", type=int, default=600, help="token budget of the feedback message")
    ap.add_argument("--policy-profile", default=None, help="override the server's policy profile")
    ap.add_argument("--output-dir", default="out/trl_grpo")
    args = ap.parse_args()

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    client = KgymClient(args.url)
    options = {"policy_profile": args.policy_profile} if args.policy_profile else {}
    rows, task_of = [], {}
    for task in args.tasks.split(","):
        r = client.reset(task_id=task, **options)  # the gym's prompt for the task
        client.close(r.episode_id)
        prompt = r.observation["prompt"]
        task_of[prompt] = r.observation["task_id"]
        rows.append({"prompt": [{"role": "user", "content": prompt}]})

    rollout = kernel_rollout_func(args.url, lambda p: task_of[p[-1]["content"]], turns=2, gamma=0.4,
                                  reward=args.reward, budget_tokens=args.feedback_tokens,
                                  max_new_tokens=args.max_new_tokens, **options)
    config = GRPOConfig(output_dir=args.output_dir, loss_type="dr_grpo", beta=0.0, max_steps=args.steps,
                        num_generations=args.num_generations, per_device_train_batch_size=args.num_generations,
                        max_completion_length=2 * args.max_new_tokens + 4 * args.feedback_tokens,
                        bf16=True, logging_steps=1, report_to="none")
    trainer = GRPOTrainer(model=args.model, args=config, train_dataset=Dataset.from_list(rows * 1000),
                          reward_funcs=[kgym_return_reward], rollout_func=rollout)
    trainer.train()


if __name__ == "__main__":
    main()
