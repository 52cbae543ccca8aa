"""verl's custom reward function file (`reward.custom_reward_function.path`): verl loads it by
path, so it re-exports the packaged `compute_score` (pip install ./python)."""
from kgym_client.verl import compute_score  # noqa: F401
