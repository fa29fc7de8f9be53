"""Load time, prompt tokens/s and generated tokens/s of a generator spec (one tiny run).

Usage: python experiments/llm_speed.py SPEC [SPEC ...]   e.g. llamacpp:qwen2.5-1.5b
       transformers:qwen2.5-1.5b. Prompt speed is timed with choice_logprobs (prompt
evaluation only, no KV reuse: each prompt differs from its first token), generation
speed with a 64-token greedy answer minus the prompt time.
"""

from __future__ import annotations

import json
import sys
import time

from logic_rag.generators import make_generator

PROMPTS = [
    f"Passage {i}: " + " ".join(f"word{i}x{j}" for j in range(60)) + "\nSummarise it in detail."
    for i in range(3)
]


def measure(spec: str) -> dict:
    gen = make_generator(spec)
    t0 = time.perf_counter()
    loaded = gen.load()
    load_s = time.perf_counter() - t0
    count = (
        (lambda text: len(loaded.tokenize(text.encode(), add_bos=False)))
        if hasattr(loaded, "tokenize")
        else (lambda text: len(loaded[0].encode(text, add_special_tokens=False)))
    )
    gen.choice_logprobs(["warm up"], ["Yes"])
    n_prompt = sum(count(p) for p in PROMPTS)
    t0 = time.perf_counter()
    for p in PROMPTS:  # one at a time: the same work on every backend
        gen.choice_logprobs([p[::-1]], ["Yes"])  # reversed: shares no prefix with the next
    prompt_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    [answer] = gen.generate([PROMPTS[0][::-1] + " again"], max_tokens=64)
    total_s = time.perf_counter() - t0
    n_gen = count(answer)
    gen_s = max(total_s - prompt_s / len(PROMPTS), 1e-9)
    return {
        "spec": gen.name,
        "load_s": round(load_s, 2),
        "prompt_tokens": n_prompt,
        "prompt_tok_per_s": round(n_prompt / prompt_s, 1),
        "generated_tokens": n_gen,
        "gen_tok_per_s": round(n_gen / gen_s, 2),
    }


if __name__ == "__main__":
    for spec in sys.argv[1:] or ["qwen2.5-1.5b"]:
        print(json.dumps(measure(spec)), flush=True)
