"""The local decoder's own token choice: the sampled distribution is llama.cpp's sampler chain's (top-k,
top-p, min-p, temperature), and draws are repeatable by seed."""

from __future__ import annotations

import ctypes

import pytest

np = pytest.importorskip("numpy", reason="numpy comes with llama-cpp-python, which is not installed")

from agentcli.models.token_choice import MIN_P, TOP_K, distribution, greedy, sampled  # noqa: E402


def _logits(seed: int, size: int = 5000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(size) * 3).astype(np.float32)


def test_greedy_is_the_most_likely_after_the_processors():
    logits = np.array([0.0, 5.0, 3.0], dtype=np.float32)
    assert greedy(None)(logits.copy()) == 1

    def forbid_best(_ids, row):
        row[1] = -np.inf
        return row

    assert greedy([forbid_best])(logits.copy()) == 2


def test_top_p_keeps_the_fewest_that_add_up_to_it():
    logits = np.log(np.array([0.4, 0.3, 0.2, 0.06, 0.04], dtype=np.float64)).astype(np.float32)
    tokens, probabilities = distribution(logits, 1.0, 0.95)
    assert tokens.tolist() == [0, 1, 2, 3]  # 0.96 at the fourth: it stays, as in llama.cpp
    assert probabilities.tolist() == pytest.approx([0.4 / 0.96, 0.3 / 0.96, 0.2 / 0.96, 0.06 / 0.96], rel=1e-5)
    assert distribution(logits, 1.0, 1.0)[0].tolist() == [0, 1, 2, 3, 4]


def test_min_p_cuts_what_is_far_less_likely_than_the_best():
    logits = np.log(np.array([0.5, 0.3, 0.17, 0.02, 0.01], dtype=np.float64)).astype(np.float32)
    assert MIN_P == 0.05
    assert distribution(logits, 1.0, 1.0)[0].tolist() == [0, 1, 2]  # 0.02 and 0.01 < 0.05 * 0.5


def test_a_colder_temperature_sharpens_what_is_kept():
    logits = np.log(np.array([0.6, 0.4], dtype=np.float64)).astype(np.float32)
    _, warm = distribution(logits, 1.0, 1.0)
    _, cold = distribution(logits, 0.3, 1.0)
    assert warm[0] == pytest.approx(0.6, rel=1e-5) and cold[0] > 0.75


def test_forbidden_tokens_are_never_drawn_and_one_left_is_certain():
    logits = np.full(100, -np.inf, dtype=np.float32)
    logits[7] = 1.0
    assert distribution(logits, 0.7, 0.95)[0].tolist() == [7]
    assert sampled(None, 0.7, 0.95, seed=1)(logits) == 7


def test_draws_follow_the_distribution_and_repeat_by_seed():
    logits = np.log(np.array([0.5, 0.3, 0.2], dtype=np.float64)).astype(np.float32)
    choose = sampled(None, 1.0, 1.0, seed=3)
    draws = [choose(logits.copy()) for _ in range(4000)]
    shares = np.bincount(draws, minlength=3) / len(draws)
    assert shares.tolist() == pytest.approx([0.5, 0.3, 0.2], abs=0.03)
    again = sampled(None, 1.0, 1.0, seed=3)
    assert [again(logits.copy()) for _ in range(4000)] == draws
    other = sampled(None, 1.0, 1.0, seed=4)
    assert [other(logits.copy()) for _ in range(4000)] != draws


@pytest.mark.llamacpp
@pytest.mark.parametrize("temperature, top_p", [(0.3, 0.95), (0.7, 0.95), (1.0, 0.9)])
def test_the_distribution_is_llama_cpps_sampler_chains(temperature, top_p):
    """The same tokens and probabilities as llama.cpp's chain (top-k, top-p, min-p, temperature) on the
    same logits: a sampled reply draws from the distribution the library would."""
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    for seed in range(5):
        logits = _logits(seed)
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        for sampler in (
            llama_cpp.llama_sampler_init_top_k(TOP_K),
            llama_cpp.llama_sampler_init_top_p(top_p, 1),
            llama_cpp.llama_sampler_init_min_p(MIN_P, 1),
            llama_cpp.llama_sampler_init_temp(temperature),
        ):
            llama_cpp.llama_sampler_chain_add(chain, sampler)
        data = (llama_cpp.llama_token_data * len(logits))()
        for i, logit in enumerate(logits.tolist()):
            data[i].id, data[i].logit, data[i].p = i, logit, 0.0
        array = llama_cpp.llama_token_data_array(data=data, size=len(logits), selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(chain, ctypes.byref(array))
        llama_cpp.llama_sampler_free(chain)
        theirs = sorted(((data[i].id, data[i].logit) for i in range(array.size)), key=lambda t: -t[1])
        weights = np.exp(np.array([logit for _, logit in theirs], dtype=np.float64) - theirs[0][1])
        tokens, probabilities = distribution(logits, temperature, top_p)
        assert tokens.tolist() == [token for token, _ in theirs]
        assert probabilities.tolist() == pytest.approx((weights / weights.sum()).tolist(), rel=1e-4)
